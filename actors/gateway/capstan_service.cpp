// The Cap'n Proto service's data calls (produce, fetch, listOffsets) and producer ids:
// translation to and from handlers/.

#include "actors/gateway/capstan_service.hpp"

#include <string>

#include <capnp/orphan.h>

#include "actors/gateway/capnp_answers.hpp"
#include "actors/gateway/handlers/fetch_handler.hpp"
#include "actors/gateway/handlers/init_producer_id_handler.hpp"
#include "actors/gateway/handlers/list_offsets_handler.hpp"
#include "actors/gateway/handlers/produce_handler.hpp"

namespace capstan {

capstan_service::capstan_service(std::shared_ptr<service_context> ctx,
                                 std::shared_ptr<fetch_pins> pins,
                                 std::shared_ptr<connection_load> load)
    : session_(std::move(ctx), std::move(load)), pins_(std::move(pins)) {}

kj::Promise<void> capstan_service::produce(ProduceContext call) {
  auto params = call.getParams();
  auto records = params.getRecords();
  produce_args args;
  args.topic = params.getTopic();
  args.partition = params.getPartition();
  args.acks = params.getAcks();
  args.timeout_ms = params.getTimeoutMs();
  args.records = bytes_view{records.begin(), records.size()};
  // The params live in the connection's read buffer: the handler copied the batch before it
  // returned.
  auto produced = handle_produce(session_, args);
  call.releaseParams();
  return produced.then([call](answer<produce_answer>&& a) mutable {
    // A lost response (the fault switch): the batch is appended, the client hears DISCONNECTED
    // and cannot know whether it was.
    if (a.value.drop_response)
      kj::throwFatalException(KJ_EXCEPTION(
          DISCONNECTED, "produce response dropped by the fault switch (injectFault)"));
    auto results = call.getResults(results_size_hint);
    if (!a.ok()) {
      results.setBaseOffset(-1);
      results.setLogAppendTime(no_timestamp);
      results.setLogStartOffset(-1);
      return set_error(results, a.err);
    }
    const auto& r = a.value.appended;
    results.setBaseOffset(r.base_offset.value());
    results.setLogAppendTime(r.log_append_time);
    results.setLogStartOffset(r.log_start.value());
  });
}

kj::Promise<void> capstan_service::fetch(FetchContext call) {
  auto params = call.getParams();
  fetch_args args;
  args.topic = params.getTopic();
  args.partition = params.getPartition();
  args.offset = params.getOffset();
  args.max_bytes = params.getMaxBytes();
  args.min_bytes = params.getMinBytes();
  args.max_wait_ms = params.getMaxWaitMs();
  args.current_leader_epoch = params.getCurrentLeaderEpoch();
  args.last_fetched_epoch = params.getLastFetchedEpoch();
  call.releaseParams();
  return handle_fetch(session_, args).then([call, pins = pins_](answer<fetch_result>&& a) mutable {
    auto results = call.getResults(results_size_hint);
    if (!a.ok()) {
      results.setHighWatermark(-1);
      results.setLogStartOffset(-1);
      return set_error(results, a.err);
    }
    const auto& r = a.value;
    results.setHighWatermark(r.high_watermark.value());
    results.setLogStartOffset(r.log_start.value());
    if (r.diverging) {
      results.setDivergingEpoch(r.diverging->epoch.value());
      results.setDivergingEndOffset(r.diverging->end.value());
    }
    const log_slice& slice = r.records;
    if (slice.empty()) return;
    // Zero copy needs 8-byte aligned data (log_slice guarantees it, and that the slice may be
    // read up to its last whole word); copy anything else rather than fail.
    if (reinterpret_cast<uintptr_t>(slice.data) % sizeof(capnp::word) == 0) {
      auto orphan = capnp::Orphanage::getForMessageContaining(results).referenceExternalData(
          capnp::Data::Reader(slice.data, slice.size));
      results.adoptRecords(kj::mv(orphan));
      pins->owners.emplace(slice.data, slice.owner);
    } else {
      results.setRecords(capnp::Data::Reader(slice.data, slice.size));
    }
  });
}

kj::Promise<void> capstan_service::listOffsets(ListOffsetsContext call) {
  auto params = call.getParams();
  const std::string topic = params.getTopic();
  const int32_t partition = params.getPartition();
  const int64_t timestamp = params.getTimestamp();
  call.releaseParams();
  return handle_list_offsets(session_, topic, partition, timestamp)
      .then([call](answer<list_offsets_result>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) {
          results.setOffset(-1);
          results.setTimestamp(no_timestamp);
          return set_error(results, a.err);
        }
        results.setOffset(a.value.found);
        results.setTimestamp(a.value.timestamp);
      });
}

kj::Promise<void> capstan_service::initProducerId(InitProducerIdContext call) {
  const bool transactional = call.getParams().getTransactionalId().size() != 0;
  call.releaseParams();
  return handle_init_producer_id(session_, transactional)
      .then([call](answer<producer_identity>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        results.setProducerId(a.value.producer_id);
        results.setProducerEpoch(a.value.producer_epoch);
      });
}

} // namespace capstan
