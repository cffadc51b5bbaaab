// InitProducerId (key 22), versions 0-4, flexible from 2: an idempotent (null transactional
// id) or transactional producer gets its producer id and epoch; from v3 it may name the id and
// epoch it had, to bump the epoch rather than get a new id.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request[] = {
    f::string("TransactionalId", v(0)).nullable_in(v(0)),
    f::int32("TransactionTimeoutMs", v(0)),
    f::int64("ProducerId", v(3)).defaults_to(-1),
    f::int16("ProducerEpoch", v(3)).defaults_to(-1),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(0)),
    f::int16("ErrorCode", v(0)),
    f::int64("ProducerId", v(0)).defaults_to(-1),
    f::int16("ProducerEpoch", v(0)),
};

} // namespace

const api_schema init_producer_id_api{api_key::init_producer_id, "InitProducerId", v(0, 4),
                                      v(2), request, response};

} // namespace capstan::kafka
