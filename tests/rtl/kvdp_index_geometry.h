// The index entry layout and footprint formulas, shared with `kvtier index-study`
// (cosim/index_geometry.h), under the testbench's namespace.
#pragma once

#include "cosim/index_geometry.h"

namespace kvtier::rtl_tb {
using cosim::entry_bits;
using cosim::footprint;
using cosim::Footprint;
using cosim::IndexGeometry;
using cosim::kEntryFlagBits;
using cosim::kEntryFormatBits;
using cosim::kEntryPrioBits;
using cosim::kEntryQosBits;
using cosim::kN5MacroDensityMibPerMm2;
using cosim::kOpcodeBuckets;
using cosim::log2_ceil;
}  // namespace kvtier::rtl_tb
