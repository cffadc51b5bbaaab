#include "actors/replica/fetch_codec.hpp"

#include <capnp/message.h>
#include <capnp/orphan.h>

#include "actors/replica/codec_fields.hpp"
#include "runtime/cluster/metadata.hpp"
#include "schema/replication.capnp.h"

namespace capstan {

namespace {

using codec::incarnation_data;
using codec::invalid;
using codec::read_incarnation;
using codec::read_tp;
using codec::set_tp;

template <class List>
status check_count(const List& list, const char* what) {
  if (list.size() > max_partitions_per_request)
    return invalid(std::string(what) + " lists " + std::to_string(list.size()) +
                   " partitions, at most " + std::to_string(max_partitions_per_request));
  return {};
}

// Runs `f` over a frame from a peer; a Cap'n Proto exception (a field of the wrong wire type)
// becomes CORRUPT_MESSAGE, and f's own error is passed on.
template <class T, class F>
auto decode(const capnp_frame& frame, F&& f) -> decltype(f(std::declval<typename T::Reader>())) {
  auto r = frame.try_read<T>(std::forward<F>(f));
  if (!r) return r.err();
  return std::move(*r);
}

} // namespace

capnp_frame encode_fetch(const fetch_message& fetch) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::Fetch>();
  root.setReplicaId(fetch.replica.value());
  if (auto d = incarnation_data(fetch.incarnation); d.size() != 0) root.setReplicaIncarnation(d);
  root.setMaxWaitMs(fetch.max_wait_ms);
  root.setMinBytes(fetch.min_bytes);
  root.setMaxBytes(fetch.max_bytes);
  auto parts = root.initPartitions(static_cast<unsigned>(fetch.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    const auto& p = fetch.partitions[i];
    set_tp(parts[i].initTopicPartition(), p.tp);
    parts[i].setCurrentLeaderEpoch(p.current_leader_epoch.value());
    parts[i].setFetchOffset(p.fetch_offset.value());
    parts[i].setLogStartOffset(p.log_start.value());
    parts[i].setPartitionMaxBytes(p.max_bytes);
  }
  return capnp_frame::from_builder(builder);
}

result<fetch_message> decode_fetch(const capnp_frame& frame) {
  return decode<schema::Fetch>(frame, [](schema::Fetch::Reader r) -> result<fetch_message> {
    fetch_message out;
    out.replica = node_id{r.getReplicaId()};
    out.max_wait_ms = r.getMaxWaitMs();
    out.min_bytes = r.getMinBytes();
    out.max_bytes = r.getMaxBytes();
    if (out.replica.value() < 0) return invalid("a follower fetch needs a replica id >= 0");
    auto incarnation = read_incarnation(r.getReplicaIncarnation(), "a fetch's replica incarnation");
    if (!incarnation) return incarnation.err();
    out.incarnation = *incarnation;
    if (out.max_wait_ms < 0 || out.max_bytes < 0) return invalid("negative max wait or max bytes");
    auto parts = r.getPartitions();
    if (auto s = check_count(parts, "Fetch"); !s) return s.err();
    out.partitions.reserve(parts.size());
    for (auto p : parts) {
      auto tp = read_tp(p.getTopicPartition());
      if (!tp) return tp.err();
      if (p.getFetchOffset() < 0 || p.getPartitionMaxBytes() < 0)
        return invalid("negative fetch offset or max bytes for " + tp->first);
      out.partitions.push_back(fetch_partition{std::move(*tp), leader_epoch{p.getCurrentLeaderEpoch()},
                                               offset{p.getFetchOffset()}, offset{p.getLogStartOffset()},
                                               p.getPartitionMaxBytes()});
    }
    return out;
  });
}

capnp_frame encode_fetch_response(const std::vector<fetched_partition>& partitions) {
  auto builder = std::make_unique<capnp::MallocMessageBuilder>();
  auto root = builder->initRoot<schema::FetchResponse>();
  auto parts = root.initPartitions(static_cast<unsigned>(partitions.size()));
  std::vector<std::shared_ptr<const void>> pins;
  for (unsigned i = 0; i < parts.size(); ++i) {
    const auto& p = partitions[i];
    auto b = parts[i];
    set_tp(b.initTopicPartition(), p.tp);
    b.setErrorCode(static_cast<uint8_t>(p.error));
    if (!p.message.empty()) b.setErrorMessage(p.message);
    b.setHighWatermark(p.high_watermark.value());
    b.setLogStartOffset(p.log_start.value());
    b.setLogEndOffset(p.log_end.value());
    const auto& slice = p.records;
    if (slice.empty()) continue;
    // Zero copy needs 8-byte aligned bytes (log_slice promises it, and that the slice may be
    // read up to its last whole word); anything else is copied rather than refused.
    if (slice.owner && reinterpret_cast<uintptr_t>(slice.data) % sizeof(capnp::word) == 0) {
      b.adoptRecords(capnp::Orphanage::getForMessageContaining(b).referenceExternalData(
        capnp::Data::Reader(slice.data, slice.size)));
      pins.push_back(slice.owner);
    } else {
      b.setRecords(capnp::Data::Reader(slice.data, slice.size));
    }
  }
  return capnp_frame::adopt(std::move(builder), std::move(pins));
}

result<std::vector<fetched_partition>> decode_fetch_response(const capnp_frame& frame) {
  return decode<schema::FetchResponse>(
    frame, [](schema::FetchResponse::Reader r) -> result<std::vector<fetched_partition>> {
      if (r.getErrorCode() != 0)
        return make_error(errc_from_code(r.getErrorCode()), r.getErrorMessage());
      auto parts = r.getPartitions();
      if (auto s = check_count(parts, "FetchResponse"); !s) return s.err();
      std::vector<fetched_partition> out;
      out.reserve(parts.size());
      for (auto p : parts) {
        auto tp = read_tp(p.getTopicPartition());
        if (!tp) return tp.err();
        fetched_partition f;
        f.tp = std::move(*tp);
        f.error = errc_from_code(p.getErrorCode());
        f.message = p.getErrorMessage();
        f.high_watermark = offset{p.getHighWatermark()};
        f.log_start = offset{p.getLogStartOffset()};
        f.log_end = offset{p.getLogEndOffset()};
        auto data = p.getRecords();
        f.records.data = data.begin();
        f.records.size = data.size();
        out.push_back(std::move(f));
      }
      return out;
    });
}

capnp_frame encode_epoch_queries(node_id replica, const std::vector<epoch_query>& queries) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::OffsetsForLeaderEpoch>();
  root.setReplicaId(replica.value());
  auto parts = root.initPartitions(static_cast<unsigned>(queries.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    set_tp(parts[i].initTopicPartition(), queries[i].tp);
    parts[i].setCurrentLeaderEpoch(queries[i].current_leader_epoch.value());
    parts[i].setLeaderEpoch(queries[i].requested.value());
  }
  return capnp_frame::from_builder(builder);
}

result<std::vector<epoch_query>> decode_epoch_queries(const capnp_frame& frame) {
  return decode<schema::OffsetsForLeaderEpoch>(
    frame, [](schema::OffsetsForLeaderEpoch::Reader r) -> result<std::vector<epoch_query>> {
      auto parts = r.getPartitions();
      if (auto s = check_count(parts, "OffsetsForLeaderEpoch"); !s) return s.err();
      std::vector<epoch_query> out;
      out.reserve(parts.size());
      for (auto p : parts) {
        auto tp = read_tp(p.getTopicPartition());
        if (!tp) return tp.err();
        out.push_back(epoch_query{std::move(*tp), leader_epoch{p.getCurrentLeaderEpoch()},
                                  leader_epoch{p.getLeaderEpoch()}});
      }
      return out;
    });
}

capnp_frame encode_epoch_answers(const std::vector<epoch_answer>& answers) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::OffsetsForLeaderEpochResponse>();
  auto parts = root.initPartitions(static_cast<unsigned>(answers.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    const auto& a = answers[i];
    set_tp(parts[i].initTopicPartition(), a.tp);
    parts[i].setErrorCode(static_cast<uint8_t>(a.error));
    if (!a.message.empty()) parts[i].setErrorMessage(a.message);
    parts[i].setLeaderEpoch(a.end.epoch.value());
    parts[i].setEndOffset(a.end.end.value());
  }
  return capnp_frame::from_builder(builder);
}

result<std::vector<epoch_answer>> decode_epoch_answers(const capnp_frame& frame) {
  return decode<schema::OffsetsForLeaderEpochResponse>(
    frame,
    [](schema::OffsetsForLeaderEpochResponse::Reader r) -> result<std::vector<epoch_answer>> {
      if (r.getErrorCode() != 0)
        return make_error(errc_from_code(r.getErrorCode()), r.getErrorMessage());
      auto parts = r.getPartitions();
      if (auto s = check_count(parts, "OffsetsForLeaderEpochResponse"); !s) return s.err();
      std::vector<epoch_answer> out;
      out.reserve(parts.size());
      for (auto p : parts) {
        auto tp = read_tp(p.getTopicPartition());
        if (!tp) return tp.err();
        out.push_back(epoch_answer{std::move(*tp), errc_from_code(p.getErrorCode()),
                                   p.getErrorMessage(),
                                   epoch_end{leader_epoch{p.getLeaderEpoch()}, offset{p.getEndOffset()}}});
      }
      return out;
    });
}

} // namespace capstan
