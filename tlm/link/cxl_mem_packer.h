#pragma once
// Packs CXL.mem messages of one direction into the slots of that direction's flit stream.
//
// Flits are built as the wire reaches them, so a message may use any slot of a flit that has
// not started yet: under load, headers share slots (two DRS in an H5 slot) and data fills
// the slots earlier headers left free; an idle link sends a message in flits of its own. A
// message never moves what earlier messages placed: it takes free slots and appends data.
//
// Rules (68B: CXL 2.0 §4.2.5; 256B: CXL 3.x §4.3.3.1, §4.3.4):
// - a header goes in a slot whose format carries it, joining a slot already used when one
//   format carries both (the slot formats of the FlitFormat); per-flit maxima per class; at
//   most `data_header_slots_per_flit` slots carrying DRS/RwD headers (68B: one, §4.2.5 MDH);
// - headers leave in order: a header is never placed in a flit before the previous header's;
// - data follows its header in order, in the next free G slots (a 64 B line = 4 chunks);
// - 68B rollover: chunks owed by earlier flits' headers are forced into the next flit's
//   first slots; if more than 3 are owed, that flit is an all-data flit (4 chunks, no header);
// - a data header is placed only while at most `max_owed_data_slots` data slots are still to
//   send (the CXL 3.x rule for H/HS slots; applied to every slot, and to 68B, as packer policy).
#include <cstdint>
#include <deque>
#include <systemc>
#include <vector>

#include "tlm/link/cxl_flit_format.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/link_wire.h"

namespace kvtier {

struct MemPlacement {
  sc_core::sc_time first_bit;  // start of the flit holding its header
  sc_core::sc_time last_bit;   // when its last slot is received and checked
  uint64_t flits_opened = 0;   // flits this message caused to be sent
  uint64_t slots = 0;          // slots it occupies (a header slot it joined counts 0)
  uint64_t replays = 0;
  uint64_t wire_bytes = 0;  // bytes of the flits it opened, replays included
};

class CxlMemPacker {
 public:
  CxlMemPacker(const FlitFormat& format, Direction dir, LinkWire& wire, bool multi_data_header,
               uint32_t max_owed_data_slots);

  // Places one message of class `kind` with `data_chunks` 16 B chunks, no earlier than `earliest`.
  MemPlacement place(MemMsg kind, uint32_t data_chunks, const sc_core::sc_time& earliest);

  // Bulk (the fast flit engine). What the next message's placement depends on besides its
  // class and its earliest time: the flits it may still use (contents, and times relative to
  // the wire's busy_until) and where data continues. Two equal signatures, with every message
  // in between placed without waiting (earliest no later than the first flit it could use),
  // mean the packing repeats from there, flit for flit.
  void signature(std::vector<uint64_t>& out) const;
  // Start of the first flit the next message may use (the latest header's), or none.
  bool has_window() const { return !window_.empty(); }
  const sc_core::sc_time& first_usable_start() const { return window_.front().start; }
  uint64_t flits_built() const { return base_ + window_.size(); }
  size_t window_flits() const { return window_.size(); }
  // The packing repeated `periods` times a period of `flits` flits and `period` of wire time:
  // the flits the caller sent for them in bulk (LinkWire::send_run) now end the stream, and the
  // window moves with them. `extra` delays the window further (replays sampled for the run).
  void advance(uint64_t flits, const sc_core::sc_time& by);

 private:
  struct HeaderSlot {
    SlotKind kind;
    MsgCounts carries{};
    uint32_t position = 0;  // physical slot number in the flit
  };
  struct Flit {
    sc_core::sc_time start, end, half_end;
    bool reserved = false;  // has a place on the wire
    bool all_data = false;
    bool h_used = false;
    bool hs_used = false;
    std::vector<HeaderSlot> headers;
    uint32_t g_used = 0;  // G slots taken, by headers or data, in slot order
    uint32_t data = 0;    // data chunks
    uint32_t rolled = 0;  // chunks whose header is in an earlier flit
    MsgCounts count{};
    uint32_t data_header_slots = 0;
  };
  // Where the message's last item landed: flit (relative to the trial) and slot position.
  struct Landing {
    size_t flit = 0;
    uint32_t position = 0;  // physical slot number in the flit
  };

  bool format_carries(SlotKind kind, const MsgCounts& counts) const;
  bool place_header(Flit& f, MemMsg kind, uint64_t& slots, uint32_t& position) const;
  bool place_data(std::vector<Flit>& trial, size_t from, uint32_t chunks, Landing& last) const;
  uint32_t physical_slot(uint32_t g_ordinal) const;
  uint32_t capacity_left(const Flit& f) const;

  const FlitFormat& format_;
  const Direction dir_;
  LinkWire& wire_;
  const bool multi_data_header_;
  const uint32_t max_owed_data_slots_;
  std::deque<Flit> window_;   // flits that may still be touched
  uint64_t base_ = 0;         // absolute index of window_.front()
  uint64_t last_header_ = 0;  // absolute index of the flit holding the latest header
  uint64_t frontier_ = 0;     // absolute index of the flit holding the latest data chunk
  bool any_ = false;
};

}  // namespace kvtier
