// make_fuzz_corpus: writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/)
// from real batches, segments, requests, frames and configs, so every seed is something a node
// may actually meet. Run from the repository root after changing an input layout or a format:
//   build-fuzz/tests/fuzz/make_fuzz_corpus tests/fuzz/corpus
// It writes seed-* files only; inputs the fuzzers found (found-*, replayed as regressions) are
// left alone.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <caf/binary_serializer.hpp>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/storage/segment.hpp"
#include "schema/client.capnp.h"
#include "schema/replication.capnp.h"
#include "tests/fuzz/segment_input.hpp"
#include "tests/support/kafka_sample.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::fuzz {
namespace {

namespace fs = std::filesystem;
namespace bf = batch_format;

constexpr timestamp_ms t0 = 1700000000000;

void write(const fs::path& dir, const std::string& name, const bytes& content) {
  fs::create_directories(dir);
  std::ofstream out(dir / ("seed-" + name), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

bytes text_bytes(std::string_view s) { return bytes(s.begin(), s.end()); }

bytes batch_of(int records, offset base = offset{0}, int value_size = 4) {
  record_batch_builder b(base, t0);
  for (int i = 0; i < records; ++i)
    b.add("k" + std::to_string(i), std::string(static_cast<size_t>(value_size), 'v'), t0 + i);
  return b.build();
}

bytes batch_with_headers() {
  record_batch_builder b(offset{0}, t0);
  b.add(bytes_view{}, std::nullopt, t0, {{text_bytes("trace"), text_bytes("abc")}});
  b.add(std::nullopt, text_bytes("no key"), t0 + 5, {{text_bytes("h"), std::nullopt}});
  b.producer(1234, 2, 17).leader_epoch(leader_epoch{3});
  return b.build();
}

bytes compacted_batch() {
  record_batch_builder b(offset{10}, t0);
  b.add("a", "1", t0).skip_offsets(2).add("b", "2", t0 + 1).skip_offsets(1);
  return b.build();
}

// A batch of `records` whose records section is compressed with `codec`.
bytes compressed_batch(compression codec, int records) {
  record_batch_builder b(offset{0}, t0);
  for (int i = 0; i < records; ++i)
    b.add("k" + std::to_string(i), std::string(24, static_cast<char>('a' + i)), t0 + i);
  return b.compress_with(codec).build();
}

// Batches back to back, each padded to a multiple of 8 (docs/formats.md, "Alignment").
bytes padded(const std::vector<bytes>& batches) {
  bytes out;
  for (const auto& b : batches) {
    out.resize(bf::align_up(out.size()), 0);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

bytes with_flags(uint8_t flags, const bytes& rest) {
  bytes out{flags};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

void record_batch_seeds(const fs::path& dir) {
  write(dir, "one-record", with_flags(0, batch_of(1)));
  write(dir, "three-batches", with_flags(0, padded({batch_of(3), batch_with_headers(),
                                                     batch_of(2, offset{5}, 40)})));
  write(dir, "compacted", with_flags(0, compacted_batch()));
  auto zero_crc = batch_of(4);
  bf::store_be<uint32_t>(zero_crc.data() + bf::crc_at, 0);
  write(dir, "crc-to-fix", with_flags(1, zero_crc));
  auto torn = padded({batch_of(2), batch_of(2, offset{2})});
  torn.resize(torn.size() - 5);
  write(dir, "torn-tail", with_flags(2, torn));
  for (auto codec : {compression::gzip, compression::snappy, compression::lz4, compression::zstd})
    write(dir, std::string(to_string(codec)), with_flags(1, compressed_batch(codec, 3)));
  write(dir, "mixed-codecs", with_flags(0, padded({compressed_batch(compression::zstd, 2),
                                                    batch_of(2, offset{2}),
                                                    compressed_batch(compression::lz4, 1)})));
}

bytes flat(capnp::MessageBuilder& m) {
  auto words = capnp::messageToFlatArray(m);
  auto b = words.asBytes();
  return bytes(b.begin(), b.end());
}

template <class Params, class Fill>
bytes request(Fill&& fill) {
  capnp::MallocMessageBuilder m;
  fill(m.initRoot<Params>());
  return flat(m);
}

void rpc_request_seeds(const fs::path& dir) {
  using service = rpc::Capstan;
  write(dir, "metadata", request<service::MetadataParams>([](auto p) {
          auto topics = p.initTopics(2);
          topics.set(0, "orders");
          topics.set(1, "bad topic!");
        }));
  write(dir, "create-topic", request<service::CreateTopicParams>([](auto p) {
          p.setName("orders");
          p.setPartitions(3);
          p.setReplicationFactor(1);
          auto configs = p.initConfigs(2);
          configs[0].setName("cleanup.policy");
          configs[0].setValue("compact");
          configs[1].setName("min.insync.replicas");
          configs[1].setValue("1");
        }));
  write(dir, "delete-topic",
        request<service::DeleteTopicParams>([](auto p) { p.setName("orders"); }));
  write(dir, "describe-configs",
        request<service::DescribeConfigsParams>([](auto p) { p.setTopic("orders"); }));
  write(dir, "alter-configs", request<service::AlterConfigsParams>([](auto p) {
          p.setTopic("orders");
          auto configs = p.initConfigs(1);
          configs[0].setName("retention.ms");
          configs[0].setValue("60000");
        }));
  auto produce = [](const bytes& records) {
    return request<service::ProduceParams>([&](auto p) {
      p.setTopic("orders");
      p.setPartition(0);
      p.setAcks(-1);
      p.setTimeoutMs(30000);
      p.setRecords(capnp::Data::Reader(records.data(), records.size()));
    });
  };
  write(dir, "produce", produce(padded({batch_of(3)})));
  write(dir, "produce-headers", produce(batch_with_headers()));
  write(dir, "fetch", request<service::FetchParams>([](auto p) {
          p.setTopic("orders");
          p.setOffset(42);
          p.setMaxBytes(1 << 20);
          p.setMinBytes(1);
          p.setMaxWaitMs(500);
        }));
  write(dir, "list-offsets", request<service::ListOffsetsParams>([](auto p) {
          p.setTopic("orders");
          p.setTimestamp(-2);
        }));
  write(dir, "commit-offsets", request<service::CommitOffsetsParams>([](auto p) {
          p.setGroup("g1");
          auto offsets = p.initOffsets(1);
          offsets[0].setTopic("orders");
          offsets[0].setOffset(7);
          offsets[0].setMetadata("m");
        }));
  write(dir, "fetch-offsets", request<service::FetchOffsetsParams>([](auto p) {
          p.setGroup("g1");
          p.initPartitions(1)[0].setTopic("orders");
        }));
  write(dir, "join-group", request<service::JoinGroupParams>([](auto p) {
          p.setGroup("g1");
          p.setClientId("c");
          p.setSessionTimeoutMs(10000);
          p.setRebalanceTimeoutMs(30000);
          p.setProtocolType("consumer");
          p.initProtocols(1)[0].setName("range");
        }));
  write(dir, "sync-group", request<service::SyncGroupParams>([](auto p) {
          p.setGroup("g1");
          p.setMemberId("c-1");
          p.setGeneration(1);
          p.initAssignments(1)[0].setMemberId("c-1");
        }));
}

bytes serialized(const capnp_frame& frame) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  auto copy = frame;
  if (sink(copy)) throw std::runtime_error("cannot serialize a frame");
  return bytes(buf.begin(), buf.end());
}

void envelope_seeds(const fs::path& dir) {
  {
    capnp::MallocMessageBuilder m;
    auto fetch = m.initRoot<schema::Fetch>();
    fetch.setReplicaId(2);
    fetch.setMaxWaitMs(500);
    fetch.setMaxBytes(1 << 20);
    auto parts = fetch.initPartitions(2);
    for (unsigned i = 0; i < 2; ++i) {
      parts[i].initTopicPartition().setTopic("orders");
      parts[i].getTopicPartition().setPartition(static_cast<int32_t>(i));
      parts[i].setFetchOffset(100 + i);
      parts[i].setCurrentLeaderEpoch(4);
    }
    write(dir, "fetch", serialized(capnp_frame::from_builder(m)));
  }
  {
    capnp::MallocMessageBuilder m;
    auto part = m.initRoot<schema::FetchResponse>().initPartitions(1)[0];
    part.initTopicPartition().setTopic("orders");
    part.setHighWatermark(9);
    const auto records = padded({batch_of(2), batch_of(1, offset{2})});
    part.setRecords(capnp::Data::Reader(records.data(), records.size()));
    write(dir, "fetch-response", serialized(capnp_frame::from_builder(m)));
  }
  {
    capnp::MallocMessageBuilder m;
    m.initRoot<schema::TopicPartition>().setTopic("t");
    write(dir, "topic-partition", serialized(capnp_frame::from_builder(m)));
  }
  write(dir, "empty", serialized(capnp_frame{}));
}

bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A segment at `base` holding `batches` batches of `records` records each, as the node writes it.
segment_files make_segment(const fs::path& dir, int64_t base, int batches, int records) {
  segment_options options;
  options.index_interval_bytes = 64;
  {
    auto seg = segment::open(dir, offset{base}, segment_open_mode::create, options);
    if (!seg) throw std::runtime_error(seg.err().to_string());
    for (int i = 0; i < batches; ++i)
      if (auto s = (*seg)->append(batch_of(records, (*seg)->next_offset())); !s)
        throw std::runtime_error(s.err().to_string());
    if (auto s = (*seg)->seal(); !s) throw std::runtime_error(s.err().to_string());
  }
  const auto stem = segment::file_stem(offset{base});
  return {base, read_file(dir / (stem + ".log")), read_file(dir / (stem + ".index")),
          read_file(dir / (stem + ".timeindex"))};
}

void segment_recovery_seeds(const fs::path& dir) {
  test::temp_dir scratch("capstan-fuzz-corpus");
  auto seg0 = make_segment(scratch.path(), 0, 6, 2);
  auto seg12 = make_segment(scratch.path(), 12, 4, 3);
  auto seg24 = make_segment(scratch.path(), 24, 2, 1);

  segment_input one{false, false, 64, {seg0}};
  write(dir, "one-segment", encode_segment_input(one));

  segment_input trusted{false, true, 64, {seg0, seg12}};
  write(dir, "trusted-then-recovered", encode_segment_input(trusted));

  segment_input three{false, false, 64, {seg0, seg12, seg24}};
  write(dir, "three-segments", encode_segment_input(three));

  auto torn = seg12;
  torn.log.resize(torn.log.size() - 9);
  segment_input torn_tail{false, true, 64, {seg0, torn}};
  write(dir, "torn-tail", encode_segment_input(torn_tail));

  auto bad_index = seg0;
  for (size_t i = 0; i < bad_index.index.size(); i += 3) bad_index.index[i] ^= 0x5a;
  bad_index.time_index.clear();
  segment_input damaged{false, true, 64, {bad_index, seg12}};
  write(dir, "damaged-index", encode_segment_input(damaged));

  auto zero_crcs = seg24;
  for (size_t pos = 0; pos + bf::header_size <= zero_crcs.log.size();) {
    const auto length = bf::load_be<int32_t>(zero_crcs.log.data() + pos + bf::batch_length_at);
    bf::store_be<uint32_t>(zero_crcs.log.data() + pos + bf::crc_at, 0);
    pos = bf::align_up(pos + static_cast<size_t>(length) + bf::log_overhead);
  }
  segment_input fix{true, false, 4096, {zero_crcs}};
  write(dir, "crcs-to-fix", encode_segment_input(fix));
}

void config_seeds(const fs::path& dir) {
  write(dir, "node", text_bytes(R"(node.id = 7
"log.dirs" = "/var/lib/capstan"
listeners = "PLAINTEXT://0.0.0.0:19092"
cluster.listeners = "127.0.0.1:19093"
metrics.listeners = "[::1]:0"
controller.quorum.voters = "7@127.0.0.1:19093"
min.insync.replicas = 2
num.partitions = 6
message.max.bytes = 2000000

[log]
segment.bytes = 1048576
retention.hours = 48
cleanup.policy = "compact"
cleaner.min.cleanable.ratio = 0.25
)"));
  write(dir, "topic-configs", text_bytes("segment.bytes=1048576\ncleanup.policy=compact\n"
                                         "min.cleanable.dirty.ratio=0.3\nmin.insync.replicas=2\n"
                                         "retention.ms=-1\nflush.messages=1000\n"));
  write(dir, "types", text_bytes("num.io.threads = 4\nlog.roll.hours = 1\n"
                                 "log.dirs = [\"a\"]\n[metrics]\nlisteners = \"127.0.0.1:0\"\n"
                                 "x = { y = 1.5e3, z = true }\n"));
}

// kafka_codec_fuzz's input: an API index and a version byte, then a request frame's contents
// (decode_request) for the lowest and highest described version of each API, and a response's.
void kafka_codec_seeds(const fs::path& dir) {
  using namespace capstan::kafka;
  const auto apis = described_apis();
  for (size_t i = 0; i < apis.size(); ++i) {
    const api_schema& api = *apis[i];
    for (api_version version : {api.valid.from, api.valid.to}) {
      const std::string name = std::string(api.name) + "-v" + std::to_string(version);
      bytes request_in{static_cast<uint8_t>(i), static_cast<uint8_t>(version)};
      const request_header h{api.key, version, 1, "seed", {}};
      if (!encode_request(h, sample_message(api, message_kind::request, version, 2), request_in))
        throw std::runtime_error("cannot encode " + name);
      write(dir, name + "-request", request_in);
      bytes response_in{static_cast<uint8_t>(i), static_cast<uint8_t>(version)};
      if (!encode_response(api, version, 1, sample_message(api, message_kind::response, version, 3),
                           response_in))
        throw std::runtime_error("cannot encode " + name);
      write(dir, name + "-response", response_in);
    }
  }
}

// kafka_listener_fuzz's input: what a client sends on one connection. Each offered API at its
// lowest and highest version (kcat -L sends ApiVersions v3, then Metadata),
// ApiVersions at a version it does not know, and pipelined requests.
void kafka_listener_seeds(const fs::path& dir) {
  using namespace capstan::kafka;
  auto framed_request = [](const api_schema& api, api_version version, int32_t id, bytes& out) {
    const auto at = begin_frame(out);
    if (!encode_request(request_header{api.key, version, id, "seed", {}},
                        sample_message(api, message_kind::request, version, 2), out))
      throw std::runtime_error("cannot encode " + std::string(api.name));
    end_frame(out, at);
  };
  bytes pipelined;
  for (const api_schema* api :
       {&api_versions_api, &metadata_api, &produce_api, &fetch_api, &list_offsets_api,
        &find_coordinator_api, &init_producer_id_api}) {
    for (api_version version : {api->valid.from, api->valid.to}) {
      bytes one;
      framed_request(*api, version, 7, one);
      write(dir, std::string(api->name) + "-v" + std::to_string(version), one);
      pipelined.insert(pipelined.end(), one.begin(), one.end());
    }
  }
  write(dir, "pipelined", pipelined);
  // ApiVersions v9: header v2, null client id, empty tagged fields.
  write(dir, "ApiVersions-v9", bytes{0, 0, 0, 11, 0, 18, 0, 9, 0, 0, 0, 5, 0xff, 0xff, 0});
}

} // namespace
} // namespace capstan::fuzz

int main(int argc, char** argv) {
  using namespace capstan::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (e.g. tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  try {
    record_batch_seeds(out / "record_batch");
    rpc_request_seeds(out / "rpc_request");
    envelope_seeds(out / "envelope");
    segment_recovery_seeds(out / "segment_recovery");
    config_seeds(out / "config");
    kafka_codec_seeds(out / "kafka_codec");
    kafka_listener_seeds(out / "kafka_listener");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_fuzz_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
