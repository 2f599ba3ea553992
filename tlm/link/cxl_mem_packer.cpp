#include "tlm/link/cxl_mem_packer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kvtier {

namespace {
constexpr size_t kRwD = static_cast<size_t>(MemMsg::M2SRwD);
constexpr size_t kDrs = static_cast<size_t>(MemMsg::S2MDRS);
bool is_data_header_slot(const MsgCounts& c) { return c[kRwD] + c[kDrs] > 0; }
}  // namespace

CxlMemPacker::CxlMemPacker(const FlitFormat& format, Direction dir, LinkWire& wire,
                           bool multi_data_header, uint32_t max_owed_data_slots)
    : format_(format),
      dir_(dir),
      wire_(wire),
      multi_data_header_(multi_data_header),
      max_owed_data_slots_(max_owed_data_slots) {}

bool CxlMemPacker::format_carries(SlotKind kind, const MsgCounts& counts) const {
  for (const SlotFormat& f : format_.mem_formats[static_cast<size_t>(dir_)]) {
    if (f.kind != kind) continue;
    bool fits = true;
    for (size_t i = 0; i < kMemMsgKinds; ++i) fits = fits && counts[i] <= f.carries[i];
    if (fits) return true;
  }
  return false;
}

// G slots are numbered 1.. in order; with an HS slot (LOpt) physical slot 8 is the HS slot.
uint32_t CxlMemPacker::physical_slot(uint32_t g_ordinal) const {
  return format_.hs_slot && g_ordinal >= 8 ? g_ordinal + 1 : g_ordinal;
}

uint32_t CxlMemPacker::capacity_left(const Flit& f) const {
  if (f.all_data) return format_.data_slots_per_line - f.data;
  return format_.g_slots - f.g_used;
}

bool CxlMemPacker::place_header(Flit& f, MemMsg kind, uint64_t& slots, uint32_t& position) const {
  const size_t k = static_cast<size_t>(kind);
  if (f.all_data) return false;                                 // all-data flits carry no header
  if (f.count[k] + 1u > format_.per_flit_max[k]) return false;  // per-flit maximum of the class
  const bool data_header = carries_data(kind);
  // Join a header slot already in use when one slot format carries both (e.g. H5: 2 DRS).
  for (HeaderSlot& s : f.headers) {
    MsgCounts c = s.carries;
    ++c[k];
    if (!multi_data_header_ && c[kDrs] > 1) continue;
    const bool becomes_data_header = data_header && !is_data_header_slot(s.carries);
    if (becomes_data_header && f.data_header_slots + 1 > format_.data_header_slots_per_flit)
      continue;
    if (!format_carries(s.kind, c)) continue;
    s.carries = c;
    ++f.count[k];
    if (becomes_data_header) ++f.data_header_slots;
    position = s.position;
    return true;
  }
  if (data_header && f.data_header_slots + 1 > format_.data_header_slots_per_flit) return false;
  MsgCounts c{};
  c[k] = 1;
  if (!f.h_used && format_carries(SlotKind::H, c)) {
    f.h_used = true;
    f.headers.push_back({SlotKind::H, c, 0});
  } else if (format_.hs_slot && !f.hs_used && format_carries(SlotKind::HS, c)) {
    f.hs_used = true;
    f.headers.push_back({SlotKind::HS, c, 8});
  } else if (capacity_left(f) >= 1 && format_carries(SlotKind::G, c)) {
    ++f.g_used;
    f.headers.push_back({SlotKind::G, c, physical_slot(f.g_used)});
  } else {
    return false;
  }
  ++f.count[k];
  if (data_header) ++f.data_header_slots;
  position = f.headers.back().position;
  slots += 1;
  return true;
}

bool CxlMemPacker::place_data(std::vector<Flit>& trial, size_t from, uint32_t chunks,
                              Landing& last) const {
  uint32_t remaining = chunks;
  for (size_t x = from; remaining > 0; ++x) {
    uint32_t take = 0;
    if (x >= trial.size()) {
      // A new flit after every flit built so far; all its chunks roll over from earlier headers.
      Flit f;
      if (format_.all_data_flits && remaining > format_.g_slots) {
        f.all_data = true;  // CXL 2.0 §4.2.5: more than 3 chunks owed -> all-data flit
        take = std::min(format_.data_slots_per_line, remaining);
      } else {
        take = std::min(format_.g_slots, remaining);
        f.g_used = take;
      }
      f.data = take;
      f.rolled = take;
      trial.push_back(f);
    } else {
      Flit& f = trial[x];
      if (f.all_data) {
        take = std::min(capacity_left(f), remaining);
        f.rolled += take;
      } else if (x == 0) {
        take = std::min(capacity_left(f), remaining);  // data after its own header, same flit
        f.g_used += take;
      } else if (format_.all_data_flits) {
        // Rollover into an existing flit (CXL 2.0 §4.2.5): up to 3 owed chunks are forced into
        // its first G slots; more than 3 make it an all-data flit, which must hold no header.
        const uint32_t owed = f.rolled + remaining;
        if (owed > format_.g_slots) {
          if (!f.headers.empty()) return false;
          f.all_data = true;
          take = std::min(capacity_left(f), remaining);
        } else {
          if (capacity_left(f) < remaining) return false;
          take = remaining;
          f.g_used += take;
        }
        f.rolled += take;
      } else {
        take = std::min(capacity_left(f), remaining);
        f.g_used += take;
        f.rolled += take;
      }
      f.data += take;
    }
    remaining -= take;
    if (take > 0) {
      const Flit& f = trial[x];
      last.flit = x;
      last.position = f.all_data ? format_.g_slots : physical_slot(f.g_used);
    }
  }
  return true;
}

MemPlacement CxlMemPacker::place(MemMsg kind, uint32_t data_chunks,
                                 const sc_core::sc_time& earliest) {
  const uint64_t tail = base_ + window_.size();
  std::vector<Flit> trial;
  uint64_t header_at = tail;
  uint64_t slots = 0;
  Landing last;
  bool placed = false;
  // Earliest flit not yet on the wire, not before the previous header, that can take it.
  for (uint64_t abs = std::max(last_header_, base_); abs < tail && !placed; ++abs) {
    const Flit& candidate = window_[abs - base_];
    if (candidate.start < earliest) continue;
    if (carries_data(kind)) {
      uint32_t owed = 0;
      for (uint64_t i = abs; i < tail; ++i) owed += window_[i - base_].data;
      if (owed > max_owed_data_slots_) continue;
    }
    trial.assign(window_.begin() + static_cast<std::ptrdiff_t>(abs - base_), window_.end());
    slots = 0;
    uint32_t position = 0;
    if (!place_header(trial[0], kind, slots, position)) continue;
    last = {0, position};
    const size_t from = frontier_ > abs ? static_cast<size_t>(frontier_ - abs) : 0;
    if (data_chunks > 0 && !place_data(trial, from, data_chunks, last)) continue;
    header_at = abs;
    placed = true;
  }
  if (!placed) {
    trial.assign(1, Flit{});
    slots = 0;
    uint32_t position = 0;
    if (!place_header(trial[0], kind, slots, position))
      throw std::logic_error(std::string(to_string(kind)) + " has no slot format in a " +
                             format_.name + " flit");
    last = {0, position};
    if (data_chunks > 0) place_data(trial, 0, data_chunks, last);
    header_at = tail;
  }
  // Commit: updated flits replace their window copies; new flits take their place on the wire.
  MemPlacement out;
  out.slots = slots + data_chunks;
  const sc_core::sc_time half = wire_.duration(format_.flit_bytes / 2);
  for (size_t i = 0; i < trial.size(); ++i) {
    const uint64_t abs = header_at + i;
    if (abs < tail) {
      window_[abs - base_] = trial[i];
      continue;
    }
    Flit f = trial[i];
    const LinkWire::Sent s = wire_.send_unit(earliest, format_.flit_bytes);
    f.start = s.start;
    f.end = s.end;
    f.half_end = s.end - half;
    f.reserved = true;
    window_.push_back(f);
    out.flits_opened += 1;
    out.replays += s.replays;
    out.wire_bytes += static_cast<uint64_t>(format_.flit_bytes) * (1 + s.replays);
  }
  const Flit& header_flit = window_[header_at - base_];
  const Flit& last_flit = window_[header_at + last.flit - base_];
  out.first_bit = header_flit.start;
  // LOpt (CXL 3.x §4.3.2): slots 0-6 lie wholly in the first 128 B half, usable once its CRC
  // checks.
  out.last_bit =
      format_.half_flit_delivery && last.position <= 6 ? last_flit.half_end : last_flit.end;
  last_header_ = header_at;
  if (data_chunks > 0) frontier_ = header_at + last.flit;
  // Flits before the latest header are never touched again (headers and data only move forward).
  while (base_ < last_header_ && !window_.empty()) {
    window_.pop_front();
    ++base_;
  }
  return out;
}

void CxlMemPacker::signature(std::vector<uint64_t>& out) const {
  out.clear();
  if (window_.empty()) return;
  const Ticks ref = wire_.busy_ticks();
  out.push_back(window_.size());
  out.push_back(frontier_ > base_ ? frontier_ - base_
                                  : 0);  // data continues there (0: anywhere from the first)
  out.push_back(last_header_ - base_);
  for (const Flit& f : window_) {
    out.push_back(static_cast<uint64_t>(ref - ticks(f.start)));
    out.push_back(static_cast<uint64_t>(ref - ticks(f.end)));
    out.push_back(static_cast<uint64_t>(ref - ticks(f.half_end)));
    uint64_t packed = static_cast<uint64_t>(f.reserved) | static_cast<uint64_t>(f.all_data) << 1 |
                      static_cast<uint64_t>(f.h_used) << 2 | static_cast<uint64_t>(f.hs_used) << 3 |
                      static_cast<uint64_t>(f.g_used) << 8 | static_cast<uint64_t>(f.data) << 16 |
                      static_cast<uint64_t>(f.rolled) << 24 |
                      static_cast<uint64_t>(f.data_header_slots) << 32 |
                      static_cast<uint64_t>(f.headers.size()) << 40;
    out.push_back(packed);
    uint64_t counts = 0;
    for (size_t k = 0; k < kMemMsgKinds; ++k)
      counts |= static_cast<uint64_t>(f.count[k]) << (8 * k);
    out.push_back(counts);
    for (const HeaderSlot& h : f.headers) {
      uint64_t v = static_cast<uint64_t>(h.kind) | static_cast<uint64_t>(h.position) << 8;
      for (size_t k = 0; k < kMemMsgKinds; ++k)
        v |= static_cast<uint64_t>(h.carries[k]) << (16 + 8 * k);
      out.push_back(v);
    }
  }
}

void CxlMemPacker::advance(uint64_t flits, const sc_core::sc_time& by) {
  for (Flit& f : window_) {
    f.start += by;
    f.end += by;
    f.half_end += by;
  }
  base_ += flits;
  last_header_ += flits;
  frontier_ += flits;
}

}  // namespace kvtier
