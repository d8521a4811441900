/*
 * cmx_split_loader.h - a program whose bytes are in two places: its head (the header and flatbuffer,
 * up to its segment base) in a model slot, its segments (the weights and plans its delegates carry)
 * in the slot's weights area (cmx_slot.h, "Weights outside the slot"). Both read in place, as
 * ExecuTorch's BufferDataLoader reads one buffer; a range that is in neither, or runs across the
 * two, is refused (Error::InvalidArgument), never read.
 *
 * Private to cmx/api.
 */
#ifndef CMX_SPLIT_LOADER_H
#define CMX_SPLIT_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include <executorch/runtime/core/data_loader.h>

namespace cmx {

class SplitDataLoader final : public executorch::runtime::DataLoader {
 public:
  /* `head`: offsets [0, head_bytes) of the program; `tail`: offsets [head_bytes, head_bytes + tail_bytes). */
  SplitDataLoader(const uint8_t* head, size_t head_bytes, const uint8_t* tail, size_t tail_bytes)
      : head_(head), head_bytes_(head_bytes), tail_(tail), tail_bytes_(tail_bytes) {}

  ET_NODISCARD executorch::runtime::Result<executorch::runtime::FreeableBuffer> load(
      size_t offset, size_t size, const SegmentInfo& segment_info) const override {
    (void)segment_info;
    if (offset <= head_bytes_ && size <= head_bytes_ - offset) {
      return executorch::runtime::FreeableBuffer(head_ + offset, size, nullptr);
    }
    if (offset >= head_bytes_ && offset - head_bytes_ <= tail_bytes_ && size <= tail_bytes_ - (offset - head_bytes_)) {
      return executorch::runtime::FreeableBuffer(tail_ + (offset - head_bytes_), size, nullptr);
    }
    return executorch::runtime::Error::InvalidArgument;
  }

  ET_NODISCARD executorch::runtime::Result<size_t> size() const override { return head_bytes_ + tail_bytes_; }

 private:
  const uint8_t* head_;
  size_t head_bytes_;
  const uint8_t* tail_;
  size_t tail_bytes_;
};

}  // namespace cmx

#endif /* CMX_SPLIT_LOADER_H */
