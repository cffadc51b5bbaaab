// Produce (key 0), versions 3-8 (record batch v2 only; none flexible): record batches for
// partitions, answered with each partition's base offset.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field partition_data_fields[] = {
    f::int32("Index", v(0)),
    f::records("Records", v(0)).nullable_in(v(0)),
};

constexpr field topic_data_fields[] = {
    f::string("Name", v(0)),
    f::array("PartitionData", v(0), partition_data_fields),
};

constexpr field request[] = {
    f::string("TransactionalId", v(3)).nullable_in(v(3)).defaults_to_null(),
    f::int16("Acks", v(0)),
    f::int32("TimeoutMs", v(0)),
    f::array("TopicData", v(0), topic_data_fields),
};

constexpr field record_error_fields[] = {
    f::int32("BatchIndex", v(8)),
    f::string("BatchIndexErrorMessage", v(8)).nullable_in(v(8)).defaults_to_null(),
};

constexpr field partition_response_fields[] = {
    f::int32("Index", v(0)),
    f::int16("ErrorCode", v(0)),
    f::int64("BaseOffset", v(0)),
    f::int64("LogAppendTimeMs", v(2)).defaults_to(-1),
    f::int64("LogStartOffset", v(5)).defaults_to(-1),
    f::array("RecordErrors", v(8), record_error_fields),
    f::string("ErrorMessage", v(8)).nullable_in(v(8)).defaults_to_null(),
};

constexpr field topic_response_fields[] = {
    f::string("Name", v(0)),
    f::array("PartitionResponses", v(0), partition_response_fields),
};

constexpr field response[] = {
    f::array("Responses", v(0), topic_response_fields),
    f::int32("ThrottleTimeMs", v(1)),
};

} // namespace

const api_schema produce_api{api_key::produce, "Produce", v(3, 8), no_versions, request,
                             response};

} // namespace capstan::kafka
