// libFuzzer target: the Cap'n Proto decoding of every client RPC request (schema/client.capnp)
// and the checks the gateway runs on it (actors/gateway/request_validation.*,
// actors/controller/voter_validation.* for addVoter and removeVoter), as
// actors/gateway/capstan_service*.cpp and its handlers read each request: the same fields, the same validation,
// and for createTopic and alterConfigs the config check the metadata actor applies next.
//
// Input: one flat Cap'n Proto message (segment table, then segments), zero-padded to whole
// words. It is decoded as the params struct of each method it lists in turn, with the
// server's reader limits. A Cap'n Proto exception is what the RPC system turns into an error for
// the one call, so it is caught here; a crash, a sanitizer report or a failed FUZZ_CHECK is a bug.
// Run: build-fuzz/tests/fuzz/rpc_request_fuzz tests/fuzz/corpus/rpc_request, or
// tests/fuzz/run.sh rpc_request [seconds] (tests/fuzz/README.md).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <capnp/serialize.h>
#include <kj/array.h>
#include <kj/exception.h>

#include "actors/controller/voter_validation.hpp"
#include "actors/gateway/request_validation.hpp"
#include "actors/gateway/rpc_limits.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "schema/client.capnp.h"
#include "tests/fuzz/fuzz_support.hpp"

namespace capstan::fuzz {
namespace {

using service = rpc::Capstan;

std::map<std::string, std::string> read_configs(capnp::List<rpc::ConfigEntry>::Reader entries) {
  std::map<std::string, std::string> out;
  for (auto e : entries) out[e.getName()] = e.getValue();
  return out;
}

void metadata(service::MetadataParams::Reader p) {
  if (!validate_list_length(p.getTopics().size(), "topics")) return;
  std::vector<std::string> wanted;
  for (auto t : p.getTopics()) wanted.emplace_back(t);
  (void)p.getAllTopics();
  for (const auto& name : wanted) (void)validate_topic_name(name);
}

void create_topic(service::CreateTopicParams::Reader p) {
  if (!validate_list_length(p.getConfigs().size(), "configs")) return;
  topic_spec spec;
  spec.name = p.getName();
  spec.partitions = p.getPartitions();
  spec.replication_factor = p.getReplicationFactor();
  spec.configs = read_configs(p.getConfigs());
  if (validate_topic_name(spec.name)) (void)validate_topic_spec(spec, 3);
}

void delete_topic(service::DeleteTopicParams::Reader p) {
  (void)validate_topic_name(p.getName());
}

void describe_configs(service::DescribeConfigsParams::Reader p) {
  (void)validate_topic_name(p.getTopic());
}

void alter_configs(service::AlterConfigsParams::Reader p) {
  if (!validate_list_length(p.getConfigs().size(), "configs") ||
      !validate_list_length(p.getDeleted().size(), "deleted"))
    return;
  const std::string topic = p.getTopic();
  const auto configs = read_configs(p.getConfigs());
  std::vector<std::string> deleted;
  for (auto key : p.getDeleted()) deleted.emplace_back(key);
  if (validate_topic_name(topic)) (void)altered_topic_configs({}, configs, deleted);
}

void produce(service::ProduceParams::Reader p) {
  const std::string topic = p.getTopic();
  if (!validate_topic_partition(topic, p.getPartition()) || !validate_acks(p.getAcks()) ||
      !validate_timeout(p.getTimeoutMs(), "timeoutMs"))
    return;
  auto records = p.getRecords();
  // A mutated batch rarely keeps its checksum; repair it in a copy so the checks behind the CRC
  // are reached too. The original bytes are validated as well.
  bytes fixed(records.begin(), records.end());
  fix_batch_crcs(fixed);
  for (bytes_view in : {bytes_view{records.begin(), records.size()}, bytes_view{fixed}}) {
    auto batch = validate_produce_records(in);
    if (!batch) continue;
    const bytes_view copy = batch->buffer().view();
    FUZZ_CHECK(copy.size() <= in.size() && std::equal(copy.begin(), copy.end(), in.begin()));
    // The gateway's copy, patched by the leader, is what the log then stores.
    bytes owned(copy.begin(), copy.end());
    set_base_offset(owned, offset{42});
    set_partition_leader_epoch(owned, leader_epoch{1});
    FUZZ_CHECK_OK(
        record_batch_view::parse(owned, max_produce_batch_bytes, batch_validation::stored));
  }
}

void fetch(service::FetchParams::Reader p) {
  if (!validate_topic_partition(p.getTopic(), p.getPartition())) return;
  auto limits =
      validate_fetch(p.getOffset(), p.getMaxBytes(), p.getMinBytes(), p.getMaxWaitMs());
  if (limits) FUZZ_CHECK(limits->max_bytes > 0 && limits->max_bytes <= max_fetch_bytes);
}

void list_offsets(service::ListOffsetsParams::Reader p) {
  if (validate_topic_partition(p.getTopic(), p.getPartition()))
    (void)validate_list_offsets_timestamp(p.getTimestamp());
}

void commit_offsets(service::CommitOffsetsParams::Reader p) {
  if (!validate_list_length(p.getOffsets().size(), "offsets")) return;
  const std::string group = p.getGroup();
  status check = validate_group_id(group);
  for (auto o : p.getOffsets()) {
    const std::string topic = o.getTopic();
    const std::string metadata = o.getMetadata();
    if (check) check = validate_topic_partition(topic, o.getPartition());
    (void)o.getOffset();
    (void)o.getLeaderEpoch();
  }
}

void fetch_offsets(service::FetchOffsetsParams::Reader p) {
  if (!validate_list_length(p.getPartitions().size(), "partitions")) return;
  status check = validate_group_id(p.getGroup());
  for (auto tp : p.getPartitions()) {
    const std::string topic = tp.getTopic();
    if (check) check = validate_topic_partition(topic, tp.getPartition());
  }
}

void create_partitions(service::CreatePartitionsParams::Reader p) {
  (void)validate_topic_name(p.getTopic());
  (void)p.getTotalCount();
}

void elect_leaders(service::ElectLeadersParams::Reader p) {
  if (!validate_list_length(p.getPartitions().size(), "partitions")) return;
  for (auto tp : p.getPartitions()) {
    const std::string topic = tp.getTopic();
    (void)tp.getPartition();
  }
}

void join_group(service::JoinGroupParams::Reader p) {
  if (!validate_list_length(p.getProtocols().size(), "protocols")) return;
  status check = validate_group_id(p.getGroup());
  if (check) check = validate_member_field(p.getMemberId(), "member id");
  if (check) check = validate_member_field(p.getGroupInstanceId(), "group instance id");
  if (check) check = validate_member_field(p.getClientId(), "client id");
  for (auto proto : p.getProtocols()) {
    if (check) check = validate_member_field(proto.getName(), "protocol name");
    (void)proto.getMetadata();
  }
}

void sync_group(service::SyncGroupParams::Reader p) {
  if (!validate_list_length(p.getAssignments().size(), "assignments")) return;
  status check = validate_group_id(p.getGroup());
  if (check) check = validate_member_field(p.getMemberId(), "member id");
  for (auto a : p.getAssignments()) {
    const std::string member = a.getMemberId();
    (void)a.getAssignment();
  }
}

void heartbeat(service::HeartbeatParams::Reader p) {
  if (validate_group_id(p.getGroup()))
    (void)validate_member_field(p.getMemberId(), "member id");
}

void describe_group(service::DescribeGroupParams::Reader p) { (void)validate_group_id(p.getGroup()); }
void delete_group(service::DeleteGroupParams::Reader p) { (void)validate_group_id(p.getGroup()); }

void leave_group(service::LeaveGroupParams::Reader p) {
  if (validate_group_id(p.getGroup()))
    (void)validate_member_field(p.getGroupInstanceId(), "group instance id");
}

void add_voter(service::AddVoterParams::Reader p) {
  if (validate_voter_id(p.getNodeId())) (void)validate_voter_endpoint(p.getEndpoint().cStr());
}

void remove_voter(service::RemoveVoterParams::Reader p) { (void)validate_voter_id(p.getNodeId()); }

template <class Params, class Fn>
void decode(kj::ArrayPtr<const capnp::word> words, Fn&& fn) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = default_node_rpc_limits().traversal_limit_words();
  try {
    capnp::FlatArrayMessageReader reader(words, options);
    fn(reader.getRoot<Params>());
  } catch (const kj::Exception&) {
    // The RPC system answers the call with this exception; the connection stays up.
  }
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan::fuzz;
  auto words = kj::heapArray<capnp::word>((size + sizeof(capnp::word) - 1) / sizeof(capnp::word));
  std::memset(words.begin(), 0, words.size() * sizeof(capnp::word));
  if (size > 0) std::memcpy(words.begin(), data, size);
  const kj::ArrayPtr<const capnp::word> in = words;
  decode<service::MetadataParams>(in, metadata);
  decode<service::CreateTopicParams>(in, create_topic);
  decode<service::DeleteTopicParams>(in, delete_topic);
  decode<service::ListTopicsParams>(in, [](service::ListTopicsParams::Reader) {});
  decode<service::DescribeConfigsParams>(in, describe_configs);
  decode<service::AlterConfigsParams>(in, alter_configs);
  decode<service::ProduceParams>(in, produce);
  decode<service::FetchParams>(in, fetch);
  decode<service::ListOffsetsParams>(in, list_offsets);
  decode<service::CommitOffsetsParams>(in, commit_offsets);
  decode<service::FetchOffsetsParams>(in, fetch_offsets);
  decode<service::CreatePartitionsParams>(in, create_partitions);
  decode<service::ElectLeadersParams>(in, elect_leaders);
  decode<service::JoinGroupParams>(in, join_group);
  decode<service::SyncGroupParams>(in, sync_group);
  decode<service::HeartbeatParams>(in, heartbeat);
  decode<service::LeaveGroupParams>(in, leave_group);
  decode<service::DescribeGroupParams>(in, describe_group);
  decode<service::DeleteGroupParams>(in, delete_group);
  decode<service::AddVoterParams>(in, add_voter);
  decode<service::RemoveVoterParams>(in, remove_voter);
  return 0;
}
