// bench_hop_floor: the latency floor of one acks=all round trip on this machine, with no broker
// in it. Four processes on 127.0.0.1 pass the messages an RF=3 acks=all produce needs, and do
// nothing else: a client sends 100 bytes to a leader; the leader sends them to two followers;
// each follower answers 16 bytes (its next fetch); once both did, the leader answers the client.
// With --write, the leader and each follower also pwrite the 100 bytes to a file of their own
// first (page cache, no fsync), as a broker appends before it forwards or acknowledges. Each
// process is one thread blocked in recv, so every hop is one wake-up, the least a broker can pay.
// With --caf, the leader and the followers are CAF actor systems configured as a node's
// (actor_system_setup): the leader's thread that reads the client hands each record to an actor,
// as a node's RPC thread does; the actor sends it to the followers' actors through the middleman
// as a capnp_frame and answers once both replied. That is the floor of the same round trip with
// CAF's scheduler and middleman in it, and nothing else of capstan. --io-worker (with --caf) moves
// each append to a detached actor that the node's actor waits for, as a node keeps its writes off
// the scheduler. --brokers (with --caf) spawns the nodes' actors as CAF brokers, which run on the
// middleman's multiplexer thread instead of the scheduler. --rpc (with --caf) puts Cap'n Proto
// RPC at both ends of the client's connection, as a capstan client and node have it: the client
// calls the Capstan interface's produce and waits for its answer; the leader serves it on a kj
// event loop thread of its own, which hands the record to the leader's actor through a node's
// bridge actor (actors/gateway/rpc_bridge) and answers once a cross-thread fulfiller says the
// followers replied. The client stays one thread, so this floor has no hand-off at its caller.
// --throughput measures the other floor, of RF=3 acks=all throughput: the client sends batches
// of --batch-bytes (default 65,536) holding records of --record-size bytes (default 1,024), with
// --in-flight (default 5) unanswered, and the leader forwards each batch as it arrives while a
// second thread of its own answers the client once both followers answered that batch. With
// --write every process appends each batch to its file, so the figure is what the machine allows
// for the copies an RF=3 write cannot avoid (into the leader's socket, to two followers, three
// times into the page cache) with no broker work at all. Raw TCP only.
// Run on demand (not a test):
//   cmake --build BUILD --target bench_hop_floor && BUILD/tests/bench_hop_floor [round trips]
//   [--write] [--caf [--io-worker] [--brokers] [--rpc]]
//   BUILD/tests/bench_hop_floor --throughput [records] [--write] [--record-size N]
//   [--batch-bytes B] [--in-flight W]
// Prints the p50 / p99 / p99.9 round trip in microseconds, or records/s and MB/s. Every child is
// stopped by pid.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <capnp/any.h>
#include <capnp/ez-rpc.h>
#include <capnp/message.h>

#include "actors/gateway/rpc_bridge.hpp"
#include "runtime/actor/actor_system_setup.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "schema/client.capnp.h"

namespace {

constexpr size_t record_size = 100;
constexpr size_t answer_size = 16;

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::_Exit(2);
}

void send_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    auto w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) die("send");
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// False at the peer's orderly close.
bool recv_all(int fd, char* data, size_t n) {
  while (n > 0) {
    auto r = ::recv(fd, data, n, 0);
    if (r == 0) return false;
    if (r < 0) die("recv");
    data += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void no_delay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
}

// A listening socket on 127.0.0.1 at any free port; returns the fd and sets `port`.
int listen_any(uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("bind");
  if (::listen(fd, 4) != 0) die("listen");
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) die("getsockname");
  port = ntohs(a.sin_port);
  return fd;
}

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("connect");
  no_delay(fd);
  return fd;
}

int accept_one(int listener) {
  int fd = ::accept(listener, nullptr, nullptr);
  if (fd < 0) die("accept");
  no_delay(fd);
  return fd;
}

// What a node does with a record before it passes it on: with --write, append it to a file of
// its own (removed at once; its pages stay while the fd is open), else nothing.
class node_log {
public:
  explicit node_log(bool write) {
    if (!write) return;
    char name[] = "/tmp/hop-floor-XXXXXX";
    file_ = ::mkstemp(name);
    if (file_ < 0) die("mkstemp");
    ::unlink(name);
  }
  void append(const char* data, size_t size = record_size) {
    if (file_ < 0) return;
    if (::pwrite(file_, data, size, at_) != static_cast<ssize_t>(size)) die("pwrite");
    at_ += static_cast<off_t>(size);
  }

private:
  int file_ = -1;
  off_t at_ = 0;
};

// Appends each message of `message_size` bytes and answers it: a record one in flight, a batch
// with --throughput (TCP's buffers then keep the leader's batches queued while this one writes).
void run_follower(int listener, bool write, size_t message_size) {
  int leader = accept_one(listener);
  node_log log(write);
  std::vector<char> message(message_size);
  std::array<char, answer_size> answer{};
  while (recv_all(leader, message.data(), message.size())) {
    log.append(message.data(), message.size());
    send_all(leader, answer.data(), answer.size());
  }
  std::_Exit(0);
}

void run_leader(int listener, uint16_t follower1, uint16_t follower2, bool write) {
  int followers[2] = {connect_to(follower1), connect_to(follower2)};
  int client = accept_one(listener);
  node_log log(write);
  std::array<char, record_size> record{};
  std::array<char, answer_size> answer{};
  while (recv_all(client, record.data(), record.size())) {
    log.append(record.data());
    for (int f : followers) send_all(f, record.data(), record.size());
    for (int f : followers)
      if (!recv_all(f, answer.data(), answer.size())) std::_Exit(1);
    send_all(client, answer.data(), answer.size());
  }
  std::_Exit(0);
}

// --throughput's leader: this thread reads, appends and forwards each batch as it arrives; a second
// one waits for both followers' answers to each batch and answers the client, so batches overlap
// as the client's window allows.
void run_pipelined_leader(int listener, uint16_t follower1, uint16_t follower2, bool write,
                          size_t batch_bytes) {
  int followers[2] = {connect_to(follower1), connect_to(follower2)};
  int client = accept_one(listener);
  std::thread answering([&] {
    std::array<char, answer_size> answer{};
    for (;;) {
      for (int f : followers)
        if (!recv_all(f, answer.data(), answer.size())) std::_Exit(0);
      send_all(client, answer.data(), answer.size());
    }
  });
  node_log log(write);
  std::vector<char> batch(batch_bytes);
  while (recv_all(client, batch.data(), batch.size())) {
    log.append(batch.data(), batch.size());
    for (int f : followers) send_all(f, batch.data(), batch.size());
  }
  std::_Exit(0);
}

struct throughput_options {
  long records = 250000;
  size_t record_size = 1024;
  size_t batch_bytes = 65536;
  int in_flight = 5;
};

// Sends every batch with at most `in_flight` unanswered and returns the seconds from the first
// send to the last answer.
double drive_pipelined(int leader, size_t batch_bytes, long batches, int in_flight) {
  std::vector<char> batch(batch_bytes, 'x');
  std::array<char, answer_size> answer{};
  const auto start = std::chrono::steady_clock::now();
  long sent = 0;
  for (; sent < batches && sent < in_flight; ++sent) send_all(leader, batch.data(), batch.size());
  for (long answered = 0; answered < batches; ++answered) {
    if (!recv_all(leader, answer.data(), answer.size())) die("the leader closed");
    if (sent < batches) {
      send_all(leader, batch.data(), batch.size());
      ++sent;
    }
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count();
}

// A frame holding `size` bytes of Data, as a record or an answer travels between nodes.
capstan::capnp_frame bytes_frame(size_t size) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.getRoot<capnp::AnyPointer>().initAsAnyStruct(0, 1);
  root.getPointerSection()[0].initAs<capnp::Data>(static_cast<unsigned>(size));
  return capstan::capnp_frame::from_builder(builder);
}

const char* first_bytes(const capstan::capnp_frame& frame) {
  return reinterpret_cast<const char*>(frame.words().begin());
}

// What a CAF node does with a record before it passes it on: appends it on the actor's own thread,
// or with --io-worker on a detached actor's (a thread of its own, as a node's I/O workers run
// every write off the scheduler), and goes on once that one answered.
class caf_node_log {
public:
  caf_node_log(caf::actor_system& sys, bool write, bool io_worker)
      : log_(std::make_shared<node_log>(write)) {
    if (!io_worker) return;
    worker_ = sys.spawn<caf::detached>([log = log_]() -> caf::behavior {
      return {[log](const capstan::capnp_frame& record) {
        log->append(first_bytes(record));
        return true;
      }};
    });
  }

  template <class Self, class Next>
  void append_then(Self* self, const capstan::capnp_frame& record, Next next) {
    if (!worker_) {
      log_->append(first_bytes(record));
      next();
      return;
    }
    self->request(worker_, caf::infinite, record).then([next](bool) mutable { next(); });
  }

private:
  std::shared_ptr<node_log> log_;
  caf::actor worker_;
};

struct caf_options {
  bool write = false;
  bool io_worker = false;
  bool brokers = false;
  bool rpc = false;
};

// Spawns `fun` as a plain actor on the scheduler or, with --brokers, as a broker on the
// middleman's multiplexer thread, where a message from a peer is handled without waking a
// scheduler thread and a message to a peer is sent without waking the multiplexer.
template <class Fun>
caf::actor spawn_node_actor(caf::actor_system& sys, const caf_options& opts, Fun fun) {
  if (opts.brokers)
    return sys.middleman().spawn_broker([fun](caf::io::broker* self) { return fun(self); });
  return sys.spawn([fun](caf::event_based_actor* self) { return fun(self); });
}

// Publishes an actor that appends each record and answers it, then tells the parent its port
// through `port_pipe` and serves until killed.
void run_caf_follower(int port_pipe, caf_options opts) {
  capstan::actor_config cfg;
  caf::actor_system sys{cfg};
  auto log = std::make_shared<caf_node_log>(sys, opts.write, opts.io_worker);
  auto answer = bytes_frame(answer_size);
  auto follower = spawn_node_actor(sys, opts, [log, answer](auto* self) -> caf::behavior {
    return {[=](const capstan::capnp_frame& record) {
      auto rp = self->template make_response_promise<capstan::capnp_frame>();
      log->append_then(self, record, [rp, answer]() mutable { rp.deliver(answer); });
      return rp;
    }};
  });
  auto port = sys.middleman().publish(follower, 0, "127.0.0.1");
  if (!port) die("publish");
  if (::write(port_pipe, &*port, sizeof *port) != sizeof *port) die("write port");
  ::pause();
  std::_Exit(0);
}

// The leader's side of --rpc: answers each produce call once `leader` answered the record,
// asking it through a node's bridge actor from the kj thread, as actors/gateway does.
class floor_service final : public capstan::rpc::Capstan::Server {
public:
  floor_service(const capstan::rpc_bridge& bridge, caf::actor leader)
      : bridge_(bridge), leader_(std::move(leader)) {}

  // The record goes on as the raw path's does: a frame of record_size bytes made once.
  kj::Promise<void> produce(ProduceContext call) override {
    struct reply_slot {
      kj::Own<kj::CrossThreadPromiseFulfiller<void>> fulfiller;
    };
    auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
    auto slot = std::make_shared<reply_slot>(reply_slot{kj::mv(paf.fulfiller)});
    auto ask = [slot, leader = leader_, record = record_](caf::event_based_actor* self) {
      self->request(leader, caf::infinite, record)
          .then([slot](const capstan::capnp_frame&) { slot->fulfiller->fulfill(); },
                [](const caf::error&) { die("leader actor"); });
    };
    caf::anon_send(bridge_.current(), capstan::bridge_job{std::move(ask)});
    return paf.promise.then([call]() mutable { call.getResults().setBaseOffset(0); });
  }

private:
  const capstan::rpc_bridge& bridge_;
  caf::actor leader_;
  const capstan::capnp_frame record_ = bytes_frame(record_size);
};

// Serves the Capstan interface on `listener` from a kj thread until the process is killed.
[[noreturn]] void serve_rpc(caf::actor_system& sys, caf::actor leader, int listener,
                            uint16_t port) {
  capstan::rpc_bridge bridge(sys, nullptr);
  // A socket accepted from `listener` inherits TCP_NODELAY, as the node's kj listener sets it.
  no_delay(listener);
  // `bridge` lives on this frame, which never returns.
  std::thread([&bridge, leader, listener, port] {
    capnp::EzRpcServer server(kj::heap<floor_service>(bridge, leader), listener, port);
    kj::NEVER_DONE.wait(server.getWaitScope());
  }).detach();
  for (;;) ::pause();
}

void run_caf_leader(int listener, uint16_t leader_port, uint16_t follower1, uint16_t follower2,
                    caf_options opts) {
  capstan::actor_config cfg;
  caf::actor_system sys{cfg};
  std::vector<caf::actor> followers;
  for (uint16_t port : {follower1, follower2}) {
    auto f = sys.middleman().remote_actor("127.0.0.1", port);
    if (!f) die("remote_actor");
    followers.push_back(*f);
  }
  auto log = std::make_shared<caf_node_log>(sys, opts.write, opts.io_worker);
  auto answer = bytes_frame(answer_size);
  auto leader = spawn_node_actor(sys, opts, [=](auto* self) -> caf::behavior {
    return {[=](const capstan::capnp_frame& record) {
      auto rp = self->template make_response_promise<capstan::capnp_frame>();
      log->append_then(self, record, [=]() mutable {
        auto waiting = std::make_shared<size_t>(followers.size());
        for (const auto& f : followers)
          self->request(f, caf::infinite, record).then([=](const capstan::capnp_frame&) mutable {
            if (--*waiting == 0) rp.deliver(answer);
          });
      });
      return rp;
    }};
  });
  if (opts.rpc) serve_rpc(sys, leader, listener, leader_port);
  int client = accept_one(listener);
  caf::scoped_actor self{sys};
  std::array<char, record_size> record{};
  const auto frame = bytes_frame(record_size);
  while (recv_all(client, record.data(), record.size())) {
    self->request(leader, caf::infinite, frame)
        .receive([&](const capstan::capnp_frame&) {},
                 [&](const caf::error&) { die("leader actor"); });
    send_all(client, record.data(), answer_size);
  }
  std::_Exit(0);
}

// `text` as a whole number in [1, max], or 0 when it is not one (trailing characters included).
long whole_number(const char* text, long max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 1 || v > max) return 0;
  return v;
}

int usage(const char* self) {
  std::fprintf(stderr,
               "usage: %s [round trips] [--write] [--caf [--io-worker] [--brokers] [--rpc]]\n"
               "       %s --throughput [records] [--write] [--record-size N] [--batch-bytes B] "
               "[--in-flight W]\n",
               self, self);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  int round_trips = 20000;
  bool write = false;
  bool caf_nodes = false;
  bool io_worker = false;
  bool brokers = false;
  bool rpc = false;
  bool throughput = false;
  bool throughput_option = false; // one of the options only --throughput takes
  long count = 0;
  throughput_options tp;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    // The value of an option that takes one: a whole number in [1, max], else 0 (a usage error).
    auto value = [&](long max) -> long {
      throughput_option = true;
      return i + 1 < argc ? whole_number(argv[++i], max) : 0;
    };
    if (arg == "--write") {
      write = true;
    } else if (arg == "--caf") {
      caf_nodes = true;
    } else if (arg == "--io-worker") {
      io_worker = true;
    } else if (arg == "--brokers") {
      brokers = true;
    } else if (arg == "--rpc") {
      rpc = true;
    } else if (arg == "--throughput") {
      throughput = true;
    } else if (arg == "--record-size") {
      long v = value(16 << 20);
      if (v == 0) return usage(argv[0]);
      tp.record_size = static_cast<size_t>(v);
    } else if (arg == "--batch-bytes") {
      long v = value(64 << 20);
      if (v == 0) return usage(argv[0]);
      tp.batch_bytes = static_cast<size_t>(v);
    } else if (arg == "--in-flight") {
      long v = value(1000);
      if (v == 0) return usage(argv[0]);
      tp.in_flight = static_cast<int>(v);
    } else if (long n = whole_number(argv[i], 100000000); n > 0) {
      count = n;
    } else {
      return usage(argv[0]);
    }
  }
  if (throughput ? caf_nodes : throughput_option) return usage(argv[0]);
  if (rpc && !caf_nodes) return usage(argv[0]);
  if (count > 0) {
    round_trips = static_cast<int>(count);
    tp.records = count;
  }
  // Whole batches of whole records; the last batch is full too, so a run may send a few more.
  const long per_batch = static_cast<long>(std::max<size_t>(1, tp.batch_bytes / tp.record_size));
  const size_t batch_bytes = static_cast<size_t>(per_batch) * tp.record_size;
  const long batches = (tp.records + per_batch - 1) / per_batch;
  std::vector<pid_t> children;
  auto spawn = [&](auto body) {
    pid_t pid = ::fork();
    if (pid < 0) die("fork");
    if (pid == 0) body();
    children.push_back(pid);
  };
  uint16_t ports[3];
  int listeners[3];
  for (int i = 0; i < 3; ++i) listeners[i] = listen_any(ports[i]);
  if (caf_nodes) {
    // The actor systems start in the children: CAF's threads do not survive a fork.
    int port_pipe[2];
    if (::pipe(port_pipe) != 0) die("pipe");
    for (int i = 1; i <= 2; ++i) {
      spawn([&] { run_caf_follower(port_pipe[1], {write, io_worker, brokers, rpc}); });
      if (::read(port_pipe[0], &ports[i], sizeof ports[i]) != sizeof ports[i]) die("read port");
    }
    spawn([&] {
      run_caf_leader(listeners[0], ports[0], ports[1], ports[2], {write, io_worker, brokers, rpc});
    });
  } else {
    const size_t message_size = throughput ? batch_bytes : record_size;
    spawn([&] { run_follower(listeners[1], write, message_size); });
    spawn([&] { run_follower(listeners[2], write, message_size); });
    if (throughput)
      spawn([&] { run_pipelined_leader(listeners[0], ports[1], ports[2], write, batch_bytes); });
    else
      spawn([&] { run_leader(listeners[0], ports[1], ports[2], write); });
  }
  for (int fd : listeners) ::close(fd);

  // With --rpc the client's connection is Cap'n Proto RPC's (below).
  int leader = rpc ? -1 : connect_to(ports[0]);
  auto stop_children = [&] {
    if (leader >= 0) ::close(leader);
    for (pid_t pid : children) ::kill(pid, SIGTERM);
    for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  };
  if (throughput) {
    const double seconds = drive_pipelined(leader, batch_bytes, batches, tp.in_flight);
    stop_children();
    const double records = static_cast<double>(batches * per_batch);
    std::printf("%.0f records of %zu bytes in batches of %ld, %d in flight, client -> leader -> 2 "
                "followers%s: %.0f records/s, %.1f MB/s\n",
                records, tp.record_size, per_batch, tp.in_flight,
                write ? " (each appending to the page cache)" : "", records / seconds,
                records * static_cast<double>(tp.record_size) / seconds / 1e6);
    return 0;
  }
  std::array<char, record_size> record{};
  std::array<char, answer_size> answer{};
  std::optional<capnp::EzRpcClient> rpc_client;
  std::optional<capstan::rpc::Capstan::Client> service;
  if (rpc) {
    rpc_client.emplace("127.0.0.1", ports[0]);
    service = rpc_client->getMain<capstan::rpc::Capstan>();
  }
  auto round_trip = [&] {
    if (!rpc) {
      send_all(leader, record.data(), record.size());
      if (!recv_all(leader, answer.data(), answer.size())) die("the leader closed");
      return;
    }
    auto req = service->produceRequest();
    req.setTopic("floor");
    req.setAcks(-1);
    req.setTimeoutMs(30000);
    req.setRecords(
        capnp::Data::Reader(reinterpret_cast<const kj::byte*>(record.data()), record.size()));
    req.send().wait(rpc_client->getWaitScope());
  };
  const int warm_up = std::min(2000, round_trips / 10);
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(round_trips));
  for (int i = 0; i < warm_up + round_trips; ++i) {
    const auto start = std::chrono::steady_clock::now();
    try {
      round_trip();
    } catch (const kj::Exception& e) {
      std::fprintf(stderr, "the RPC to the leader failed: %s\n", e.getDescription().cStr());
      stop_children();
      std::_Exit(2);
    }
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    if (i >= warm_up) micros.push_back(took.count());
  }
  service.reset();
  rpc_client.reset();
  stop_children();

  std::sort(micros.begin(), micros.end());
  auto at = [&](double q) { return micros[static_cast<size_t>(q * (micros.size() - 1))]; };
  std::printf("%d round trips client -> leader -> 2 followers -> leader -> client%s%s%s%s: "
              "p50 %.0f us, p99 %.0f us, p99.9 %.0f us\n",
              round_trips, rpc ? " (Cap'n Proto RPC between client and leader)" : "",
              !caf_nodes  ? ""
              : io_worker ? " (CAF actors and middleman in the nodes, appends on a detached actor)"
                          : " (CAF actors and middleman in the nodes)",
              caf_nodes && brokers ? " (the nodes' actors are brokers)" : "",
              write ? " (each appending to the page cache)" : "", at(0.5), at(0.99), at(0.999));
  return 0;
}
