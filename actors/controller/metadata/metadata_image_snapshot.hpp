#pragma once

// The image as a Raft snapshot's data and back: the cluster id and the records that rebuild the
// image (metadata_image::to_records), encoded as metadata_record_codec's snapshot. Reading one
// applies those records to an empty image of that cluster id, so a snapshot is checked exactly as
// the log is.

#include "actors/controller/metadata/metadata_image.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::controller {

bytes write_image_snapshot(const metadata_image& image);

// CORRUPT_MESSAGE for bytes decode_snapshot refuses; the apply error (naming the record) for
// records that do not rebuild an image.
result<metadata_image> read_image_snapshot(bytes_view data);

} // namespace capstan::controller
