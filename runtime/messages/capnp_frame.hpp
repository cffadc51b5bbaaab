#pragma once

// The one envelope that carries a Cap'n Proto message between actors (docs/messages.md): an
// immutable, reference-counted flat message. Copying a frame copies a pointer, so a local send
// shares the buffer; a remote send writes the word count and the words into CAF's stream.
//
// Invariant: a frame holds either nothing (the empty message, every field at its default) or
// exactly one flat message whose segment table and pointers are in bounds: frames are built from
// a MessageBuilder, or validated by from_words() (which the deserializer uses). Reading a field
// whose wire type contradicts the schema can still make Cap'n Proto throw, so code reading a
// peer's frame uses try_read(), which turns that into CORRUPT_MESSAGE. Nor does a frame's size
// bound its lists: a list of empty structs claims up to the traversal limit's entries in two
// words, so code iterating a peer's list bounds how many entries it reads.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/serializer.hpp>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>
#include <kj/exception.h>
#include <kj/one-of.h>

#include "runtime/result.hpp"

namespace capstan {

// Largest frame a node accepts from a peer (load_frame, from_words); senders keep their frames
// below it (from_builder does not check). Above Cap'n Proto's default 64 MiB traversal limit so
// a fetch response of `replica.fetch.max.bytes` fits with room to spare.
inline constexpr size_t max_frame_bytes = size_t{128} << 20;
inline constexpr size_t max_frame_words = max_frame_bytes / sizeof(capnp::word);

// Reader options for a message of `words` words: the traversal limit scales with the message so
// large frames read fully, while a message whose pointers overlap (an amplification attack)
// still trips it.
capnp::ReaderOptions frame_reader_options(size_t words);

// The flat form of the empty message (one segment holding a null root pointer), which readers
// of an empty frame see. Static storage.
kj::ArrayPtr<const capnp::word> empty_message_words();

// What a frame holds: either one flat message (built with from_builder or received from a peer),
// or a builder adopted whole (adopt) whose Data fields may reference memory outside it (a sealed
// segment's mmap) that `pins` keep alive. Immutable once a frame holds it.
struct frame_storage {
  kj::Array<capnp::word> flat;
  std::unique_ptr<capnp::MallocMessageBuilder> builder;
  // The adopted builder's segments, taken once: reading them needs no call into the builder,
  // so any thread may read the frame.
  kj::Array<kj::ArrayPtr<const capnp::word>> segments;
  std::vector<std::shared_ptr<const void>> pins;
  size_t flat_size_words = 0; // the size of the flat form (segment table included)
};

// A typed view of a frame. Keeps the frame's storage alive for as long as it exists, so readers
// obtained from root() stay valid while this object does. Not copyable or movable (Cap'n
// Proto's message readers are not); bind it with `auto r = frame.reader<T>();`.
template <class T>
class frame_reader {
public:
  explicit frame_reader(std::shared_ptr<const frame_storage> storage)
    : storage_(std::move(storage)) {
    if (storage_ && storage_->builder) {
      reader_.template init<capnp::SegmentArrayMessageReader>(
        storage_->segments.asPtr(), frame_reader_options(storage_->flat_size_words));
    } else {
      reader_.template init<capnp::FlatArrayMessageReader>(
        storage_ ? storage_->flat.asPtr() : empty_message_words(),
        frame_reader_options(storage_ ? storage_->flat.size() : 0));
    }
  }

  frame_reader(const frame_reader&) = delete;
  frame_reader& operator=(const frame_reader&) = delete;

  // Lvalues only: the returned reader points into this object, so
  // `auto r = frame.reader<T>().root();` would dangle and does not compile.
  typename T::Reader root() & { return message().template getRoot<T>(); }
  typename T::Reader root() && = delete;
  capnp::MessageReader& message() & {
    if (reader_.template is<capnp::SegmentArrayMessageReader>())
      return reader_.template get<capnp::SegmentArrayMessageReader>();
    return reader_.template get<capnp::FlatArrayMessageReader>();
  }

private:
  std::shared_ptr<const frame_storage> storage_;
  kj::OneOf<capnp::FlatArrayMessageReader, capnp::SegmentArrayMessageReader> reader_;
};

class capnp_frame {
public:
  // The empty message.
  capnp_frame() = default;
  capnp_frame(const capnp_frame&) = default;
  capnp_frame(capnp_frame&&) noexcept = default;
  capnp_frame& operator=(const capnp_frame&) = default;
  capnp_frame& operator=(capnp_frame&&) noexcept = default;
  ~capnp_frame() = default;

  // Flattens `builder` (one copy). The builder may be reused or dropped afterwards.
  static capnp_frame from_builder(capnp::MessageBuilder& builder);

  // Takes `builder` whole, without copying: the zero-copy path for fetch responses, whose Data
  // fields reference stored record bytes (Orphanage::referenceExternalData). `pins` keep that
  // memory alive for as long as any copy of the frame exists. A remote send writes the segments
  // straight from where they are (the same bytes as the flat form); a local send shares them.
  // REQUIRES: nothing modifies the builder afterwards.
  static capnp_frame adopt(std::unique_ptr<capnp::MallocMessageBuilder> builder,
                           std::vector<std::shared_ptr<const void>> pins = {});

  // Adopts `words` if they hold exactly one well-formed flat message of at most max_frame_words
  // words whose root is a struct (or null); otherwise CORRUPT_MESSAGE or MESSAGE_TOO_LARGE.
  // Traverses every pointer once: O(number of pointers), independent of Data/Text sizes.
  static result<capnp_frame> from_words(kj::Array<capnp::word> words);

  // REQUIRES: T is a generated struct type. Never throws for the root itself; see the top
  // comment about fields.
  template <class T>
  frame_reader<T> reader() const {
    return frame_reader<T>(storage_);
  }

  // Calls `f(typename T::Reader)` and returns its value as a result (or a status when `f`
  // returns void); a Cap'n Proto exception raised while reading becomes CORRUPT_MESSAGE.
  template <class T, class F>
  auto try_read(F&& f) const {
    using value_type = std::invoke_result_t<F, typename T::Reader>;
    using result_type =
      std::conditional_t<std::is_void_v<value_type>, status, result<value_type>>;
    try {
      auto r = reader<T>();
      if constexpr (std::is_void_v<value_type>) {
        std::forward<F>(f)(r.root());
        return result_type{};
      } else {
        return result_type{std::forward<F>(f)(r.root())};
      }
    } catch (const kj::Exception& e) {
      return result_type{corrupt_frame_error(e)};
    }
  }

  // The flat words. REQUIRES: !adopted() (an adopted builder has no flat form).
  kj::ArrayPtr<const capnp::word> words() const;
  // The segments of an adopted builder (empty otherwise).
  kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments() const;
  bool adopted() const { return storage_ && storage_->builder; }
  // The size of the flat form, which is what goes on the wire.
  size_t size_words() const { return storage_ ? storage_->flat_size_words : 0; }
  size_t size_bytes() const { return size_words() * sizeof(capnp::word); }
  bool empty() const { return size_words() == 0; }

  // True iff both frames share one storage (a local send does not copy).
  bool shares_buffer_with(const capnp_frame& other) const { return storage_ == other.storage_; }

private:
  explicit capnp_frame(std::shared_ptr<const frame_storage> storage);

  static error corrupt_frame_error(const kj::Exception& e);

  std::shared_ptr<const frame_storage> storage_;
};

// Wire format: u64 word count, then the flat words (Cap'n Proto's little-endian layout: segment
// table, then segments). An adopted builder writes its table and segments from where they are.
caf::error save_frame(caf::serializer& sink, const capnp_frame& frame);

// Reads what save_frame wrote. Fails with an error, never a crash or an allocation larger than
// the input holds, on a count above max_frame_words, a count beyond the remaining input, or
// words that are not one well-formed message (from_words).
caf::error load_frame(caf::deserializer& source, capnp_frame& frame);

// CAF 0.17 inspection: binary for CAF's (de)serializers, the byte size for anything else (to_string).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, capnp_frame& x) {
  if constexpr (std::is_base_of_v<caf::deserializer, Inspector>) {
    return load_frame(f, x);
  } else if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    return save_frame(f, x);
  } else {
    return f(caf::meta::type_name("capnp_frame"), x.size_bytes());
  }
}

} // namespace capstan
