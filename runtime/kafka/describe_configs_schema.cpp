// DescribeConfigs (key 32), versions 1-4, flexible from 4: the configs of topics or brokers,
// each with its source and, when asked, its synonyms and documentation.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field resource_fields[] = {
    f::int8("ResourceType", v(0)),
    f::string("ResourceName", v(0)),
    f::array_of(field_type::string, "ConfigurationKeys", v(0)).nullable_in(v(0)),
};

constexpr field request[] = {
    f::array("Resources", v(0), resource_fields),
    f::boolean("IncludeSynonyms", v(1)),
    f::boolean("IncludeDocumentation", v(3)),
};

constexpr field synonym_fields[] = {
    f::string("Name", v(1)),
    f::string("Value", v(1)).nullable_in(v(0)),
    f::int8("Source", v(1)),
};

constexpr field config_fields[] = {
    f::string("Name", v(0)),
    f::string("Value", v(0)).nullable_in(v(0)),
    f::boolean("ReadOnly", v(0)),
    f::int8("ConfigSource", v(1)).defaults_to(-1),
    f::boolean("IsSensitive", v(0)),
    f::array("Synonyms", v(1), synonym_fields),
    f::int8("ConfigType", v(3)),
    f::string("Documentation", v(3)).nullable_in(v(0)),
};

constexpr field result_fields[] = {
    f::int16("ErrorCode", v(0)),
    f::string("ErrorMessage", v(0)).nullable_in(v(0)),
    f::int8("ResourceType", v(0)),
    f::string("ResourceName", v(0)),
    f::array("Configs", v(0), config_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(0)),
    f::array("Results", v(0), result_fields),
};

} // namespace

const api_schema describe_configs_api{api_key::describe_configs, "DescribeConfigs", v(1, 4),
                                      v(4), request, response};

} // namespace capstan::kafka
