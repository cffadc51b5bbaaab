// A capstan client in a few lines: connects to a cluster, produces --records records with
// acks=all through the client library's producer, then reads them back with its consumer, from
// the offsets the acknowledgements named, and prints each.
//
//   examples/three-node/start.sh        # a cluster with topic `example`
//   build/examples/cpp-client/capstan_client_example --bootstrap 127.0.0.1:19092 --topic example
//
// Exit code 0 when every record was acknowledged and read back, 1 otherwise (the error on
// stderr), 2 for a bad command line.

#include "runtime/client/cluster_client.hpp"
#include "runtime/client/consumer.hpp"
#include "runtime/client/producer.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace client = capstan::client;
using capstan::bytes_view;
using capstan::offset;

namespace {

int failed(const std::string& what) {
  std::cerr << "error: " << what << std::endl;
  return 1;
}

bytes_view as_bytes(const std::string& s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

} // namespace

int main(int argc, char** argv) {
  std::string bootstrap = "127.0.0.1:19092";
  std::string topic = "example";
  int records = 10;
  CLI::App app{"Produce records with acks=all and read them back with capstan's C++ client"};
  app.add_option("--bootstrap", bootstrap, "HOST:PORT[,HOST:PORT...] of the cluster")
      ->capture_default_str();
  app.add_option("--topic", topic, "An existing topic")->capture_default_str();
  app.add_option("--records", records, "How many records")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2; // --help is a ParseError too
  }

  client::client_config config;
  config.bootstrap.clear();
  std::istringstream addresses(bootstrap);
  for (std::string address; std::getline(addresses, address, ',');)
    config.bootstrap.push_back(address);
  config.acks = -1; // acks=all: acknowledged once every in-sync replica has the record

  auto connected = client::cluster_client::connect(config);
  if (!connected) return failed(connected.err().to_string());
  auto& cluster = **connected;

  // Produce. The callbacks run on the client's thread, hence the mutex.
  std::mutex mu;
  std::map<int32_t, offset> first_offset; // per partition written to
  std::optional<capstan::error> first_error;
  int acknowledged = 0;
  std::set<std::string> sent;
  {
    client::producer producer(cluster, config);
    for (int i = 1; i <= records; ++i) {
      const std::string value = "record " + std::to_string(i) + " of " + std::to_string(records);
      sent.insert(value);
      producer.send(topic, std::nullopt, as_bytes(value), std::nullopt,
                    [&](capstan::result<client::record_metadata> r) {
                      std::lock_guard lock(mu);
                      if (!r) {
                        if (!first_error) first_error = r.err();
                        return;
                      }
                      ++acknowledged;
                      auto [at, added] = first_offset.emplace(r->partition, r->off);
                      if (!added && r->off < at->second) at->second = r->off;
                    });
    }
    producer.flush();
  }
  if (first_error)
    return failed(std::to_string(records - acknowledged) + " of " + std::to_string(records) +
                  " records not acknowledged: " + first_error->to_string());
  std::cout << "produced " << acknowledged << " records to " << topic << " with acks=all"
            << std::endl;

  // Read back from where the first acknowledged record of each partition landed.
  client::consumer consumer(cluster, config);
  if (auto s = consumer.assign(topic); !s) return failed(s.err().to_string());
  for (const auto& [partition, from] : first_offset) consumer.seek({topic, partition}, from);
  int read = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!sent.empty() && std::chrono::steady_clock::now() < deadline) {
    auto polled = consumer.poll(std::chrono::seconds(1));
    if (!polled) return failed(polled.err().to_string());
    for (const auto& r : *polled) {
      const std::string value = r.value ? std::string(r.value->begin(), r.value->end()) : "null";
      std::cout << r.topic << "-" << r.partition << "@" << r.off.value() << ": " << value
                << std::endl;
      sent.erase(value);
      ++read;
    }
  }
  if (!sent.empty())
    return failed(std::to_string(sent.size()) + " acknowledged records not read back in 30 s");
  std::cout << "read back all " << records << " records (" << read << " read)" << std::endl;
  return 0;
}
