#include "actors/controller/metadata/metadata_image_snapshot.hpp"

#include "actors/controller/metadata/metadata_record_codec.hpp"

namespace capstan::controller {

bytes write_image_snapshot(const metadata_image& image) {
  return encode_snapshot(
      snapshot_contents{image.cluster_id(), image.to_records(), image.max_broker_epoch()});
}

result<metadata_image> read_image_snapshot(bytes_view data) {
  auto contents = decode_snapshot(data);
  if (!contents) return contents.err();
  metadata_image image(contents->cluster_id);
  for (size_t i = 0; i < contents->records.size(); ++i) {
    const auto& r = contents->records[i];
    if (auto s = image.apply(r); !s)
      return make_error(s.code(), "metadata snapshot record " + std::to_string(i) + " (" +
                                      std::string(record_kind(r)) + "): " + s.err().message);
  }
  image.raise_max_broker_epoch(contents->max_broker_epoch);
  return image;
}

} // namespace capstan::controller
