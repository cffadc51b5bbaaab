// ApiVersions (key 18), versions 0-3, flexible from 3. A client's first request: the broker
// answers with every API it offers and the version range of each.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request[] = {
    f::string("ClientSoftwareName", v(3)),
    f::string("ClientSoftwareVersion", v(3)),
};

constexpr field api_version_fields[] = {
    f::int16("ApiKey", v(0)),
    f::int16("MinVersion", v(0)),
    f::int16("MaxVersion", v(0)),
};

constexpr field supported_feature_fields[] = {
    f::string("Name", v(3)),
    f::int16("MinVersion", v(3)),
    f::int16("MaxVersion", v(3)),
};

constexpr field finalized_feature_fields[] = {
    f::string("Name", v(3)),
    f::int16("MaxVersionLevel", v(3)),
    f::int16("MinVersionLevel", v(3)),
};

constexpr field response[] = {
    f::int16("ErrorCode", v(0)),
    f::array("ApiKeys", v(0), api_version_fields),
    f::int32("ThrottleTimeMs", v(1)),
    f::array("SupportedFeatures", v(3), supported_feature_fields).tagged(0, v(3)),
    f::int64("FinalizedFeaturesEpoch", v(3)).tagged(1, v(3)).defaults_to(-1),
    f::array("FinalizedFeatures", v(3), finalized_feature_fields).tagged(2, v(3)),
    f::boolean("ZkMigrationReady", v(3)).tagged(3, v(3)),
};

} // namespace

const api_schema api_versions_api{api_key::api_versions, "ApiVersions", v(0, 3), v(3),
                                  request, response};

} // namespace capstan::kafka
