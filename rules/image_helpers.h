// C++ helpers for rules/image.rules: accesses of image buffers (dtypes::imagef) as texel reads and writes.
// Unit-tested in image_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// The image a buffer is (a PARAM of an image dtype, through AFTER), or null.
const UOp* image_of(const UPtr& buf);
// Guard: an access of image buffer b at a flat float index i (an index value, not yet a texel coordinate).
bool float_access(const UPtr& b, const UPtr& i);
// Does i % 4 simplify to 0 (i is the first channel of a texel wherever it runs)?
bool texel_aligned(const UPtr& i);
// The texel float i lies in, as an int2-to-be: VECTORIZE((i/4) % width, (i/4) / width) of index lanes,
// simplified (rules::symbolic).
UPtr texel_coord(const UPtr& i, int64_t width);
// INDEX(img, i, gate...) -> INDEX(img, texel_coord(i), gate...), typed as a float4 pointer: a texel's address.
UPtr texel_address(const UPtr& addr);
// A load of n lanes from an image at float i (unaligned, or not 4 lanes): lane k reads the texel of i + k
// (keeping the load's gate; its alternative on every channel) and selects channel (i + k) % 4, a GEP
// when the channel is known, else a WHERE per channel. One value for n = 1, a VECTORIZE of the lanes else.
UPtr channels_of_texels(const UPtr& load);
// Throws rg::Error: a store to an image that is not a whole texel (tinygrad's image stores are whole too).
UPtr partial_texel_store(const UPtr& store);

}  // namespace rg
