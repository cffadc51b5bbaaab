#include "actors/controller/metadata/producer_id_decisions.hpp"

namespace capstan::controller {

result<decision> allocate_producer_ids(const metadata_image& image, int64_t size) {
  auto block = next_producer_id_block(image.next_producer_id(), size);
  if (!block) return block.err();
  decision out;
  out.records.push_back(producer_ids_record{block->first_id, block->size});
  return out;
}

} // namespace capstan::controller
