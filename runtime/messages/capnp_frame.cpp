#include "runtime/messages/capnp_frame.hpp"

#include <algorithm>
#include <cassert>

#include <caf/binary_deserializer.hpp>
#include <capnp/any.h>

#include "runtime/actor/caf_error.hpp"

namespace capstan {

namespace {

// Cap'n Proto's own default, the floor for small messages.
constexpr uint64_t min_traversal_words = uint64_t{8} << 20;

// A well-formed message traverses at most its own size; the factor leaves room for a reader
// that visits the same sub-struct several times.
constexpr uint64_t traversal_factor = 4;

caf::error frame_error(errc code, std::string message) {
  return to_caf_error(make_error(code, std::move(message)));
}

} // namespace

kj::ArrayPtr<const capnp::word> empty_message_words() {
  // Segment table {count - 1 = 0, size of segment 0 = 1 word}, then the null root pointer.
  alignas(capnp::word) static const uint32_t words[4] = {0, 1, 0, 0};
  return kj::arrayPtr(reinterpret_cast<const capnp::word*>(words), 2);
}

capnp::ReaderOptions frame_reader_options(size_t words) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = std::max(min_traversal_words, traversal_factor * words);
  return options;
}

namespace {

std::shared_ptr<const frame_storage> flat_storage(kj::Array<capnp::word> words) {
  auto storage = std::make_shared<frame_storage>();
  storage->flat_size_words = words.size();
  storage->flat = kj::mv(words);
  return storage;
}

// Words of the flat form's segment table: a u32 segment count - 1, a u32 size per segment,
// padded to a whole word.
size_t segment_table_words(size_t segments) { return segments / 2 + 1; }

} // namespace

capnp_frame::capnp_frame(std::shared_ptr<const frame_storage> storage)
  : storage_(std::move(storage)) {}

capnp_frame capnp_frame::from_builder(capnp::MessageBuilder& builder) {
  return capnp_frame(flat_storage(capnp::messageToFlatArray(builder)));
}

capnp_frame capnp_frame::adopt(std::unique_ptr<capnp::MallocMessageBuilder> builder,
                               std::vector<std::shared_ptr<const void>> pins) {
  auto storage = std::make_shared<frame_storage>();
  auto segments = builder->getSegmentsForOutput();
  storage->segments = kj::heapArray<kj::ArrayPtr<const capnp::word>>(segments.size());
  size_t words = segment_table_words(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    storage->segments[i] = segments[i];
    words += segments[i].size();
  }
  storage->flat_size_words = words;
  storage->builder = std::move(builder);
  storage->pins = std::move(pins);
  return capnp_frame(std::move(storage));
}

result<capnp_frame> capnp_frame::from_words(kj::Array<capnp::word> words) {
  if (words.size() == 0)
    return capnp_frame{};
  if (words.size() > max_frame_words)
    return make_error(errc::message_too_large,
                      "capnp frame of " + std::to_string(words.size()) + " words exceeds "
                        + std::to_string(max_frame_words));
  try {
    capnp::FlatArrayMessageReader reader(words, frame_reader_options(words.size()));
    if (reader.getEnd() != words.end())
      return make_error(errc::corrupt_message, "capnp frame has trailing words after the message");
    auto root = reader.getRoot<capnp::AnyPointer>();
    auto type = root.getPointerType();
    if (type != capnp::PointerType::NULL_ && type != capnp::PointerType::STRUCT)
      return make_error(errc::corrupt_message, "capnp frame root is not a struct");
    // Visits every pointer, bounds-checking each against its segment.
    root.targetSize();
  } catch (const kj::Exception& e) {
    return corrupt_frame_error(e);
  }
  return capnp_frame(flat_storage(kj::mv(words)));
}

kj::ArrayPtr<const capnp::word> capnp_frame::words() const {
  assert(!adopted());
  if (!storage_)
    return {};
  return storage_->flat.asPtr();
}

kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> capnp_frame::segments() const {
  if (!storage_)
    return {};
  return storage_->segments.asPtr();
}

error capnp_frame::corrupt_frame_error(const kj::Exception& e) {
  return make_error(errc::corrupt_message,
                    std::string("malformed capnp frame: ") + e.getDescription().cStr());
}

caf::error save_frame(caf::serializer& sink, const capnp_frame& frame) {
  uint64_t count = frame.size_words();
  if (auto err = sink(count))
    return err;
  if (count == 0)
    return caf::none;
  // apply_raw only reads from the buffer when saving.
  auto raw = [&](kj::ArrayPtr<const capnp::word> words) {
    return sink.apply_raw(words.size() * sizeof(capnp::word),
                          const_cast<capnp::word*>(words.begin()));
  };
  if (!frame.adopted())
    return raw(frame.words());
  auto segments = frame.segments();
  auto table = kj::heapArray<uint32_t>(segment_table_words(segments.size()) * 2);
  std::fill(table.begin(), table.end(), 0);
  table[0] = static_cast<uint32_t>(segments.size() - 1);
  for (size_t i = 0; i < segments.size(); ++i)
    table[i + 1] = static_cast<uint32_t>(segments[i].size());
  if (auto err = raw(kj::arrayPtr(reinterpret_cast<const capnp::word*>(table.begin()),
                                  table.size() / 2)))
    return err;
  for (auto segment : segments)
    if (auto err = raw(segment))
      return err;
  return caf::none;
}

caf::error load_frame(caf::deserializer& source, capnp_frame& frame) {
  uint64_t count = 0;
  if (auto err = source(count))
    return err;
  if (count > max_frame_words)
    return frame_error(errc::message_too_large,
                       "peer sent a capnp frame of " + std::to_string(count) + " words");
  // BASP hands us a binary_deserializer over the whole payload: refuse a count the input cannot
  // hold before allocating for it. Other deserializers are bounded by max_frame_words alone.
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source);
      binary != nullptr && binary->remaining() / sizeof(capnp::word) < count)
    return frame_error(errc::corrupt_message,
                       "truncated capnp frame: " + std::to_string(count) + " words announced, "
                         + std::to_string(binary->remaining()) + " bytes left");
  if (count == 0) {
    frame = capnp_frame{};
    return caf::none;
  }
  auto words = kj::heapArray<capnp::word>(count);
  if (auto err = source.apply_raw(count * sizeof(capnp::word), words.begin()))
    return err;
  auto validated = capnp_frame::from_words(kj::mv(words));
  if (!validated)
    return to_caf_error(validated.err());
  frame = std::move(validated.value());
  return caf::none;
}

} // namespace capstan
