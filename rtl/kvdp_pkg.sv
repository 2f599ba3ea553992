// Engine-internal types of the kvdp data-plane engine.
//
// The host-visible command set (descriptor, completion, opcodes, status codes) is generated
// into kvdp_cmdset_pkg from tools/cmdset/kvdp_cmdset.tbl; this package only holds what the
// engine adds on its own side: the DMA port's direction code, the record that travels from
// the lookup stage to the DMA command generator, and the index entry width formula.
package kvdp_pkg;
  import kvdp_cmdset_pkg::*;

  // Direction of one DMA burst on the dma_req_* port. A co-simulation transactor decodes it
  // with the same values (tests/rtl/kvdp_tb_types.h mirrors them for the testbench).
  typedef enum logic [1:0] {
    DMA_DIR_TIER_TO_HBM = 2'd0,  // PROMOTE: tier copy -> HBM
    DMA_DIR_HBM_TO_TIER = 2'd1,  // DEMOTE: HBM -> new tier copy (write-once)
    DMA_DIR_TIER_TO_TIER = 2'd2  // RECOMPRESS: tier copy rewritten in place
  } dma_dir_e;

  // Bits of a stored format code: the table defines three formats (BF16, FP8, INT4).
  localparam int unsigned FormatBits = 2;
  // The descriptor's qos and prio are kept whole in the index.
  localparam int unsigned QosBits = 8;
  localparam int unsigned PrioBits = 16;
  // Flag bits of an entry besides valid: shareable, pinned, HBM copy resident.
  localparam int unsigned EntryFlagBits = 3;

  // Per-opcode performance counters: one bucket per defined opcode (NOP .. QUERY) and one
  // last bucket for any undefined opcode.
  localparam int unsigned OpcodeBuckets = int'(OPCODE_QUERY) + 2;

  // Width of one index entry. tests/rtl/kvdp_index_geometry.h holds the same formula for
  // the footprint study; a test checks both against the Verilated engine's cap_entry_bits_o.
  function automatic int unsigned entry_bits(int unsigned tag_bits, int unsigned tenant_bits,
                                             int unsigned tier_addr_bits,
                                             int unsigned hbm_slot_bits,
                                             int unsigned length_bits,
                                             int unsigned policy_bits);
    return 1 + tag_bits + tenant_bits + EntryFlagBits + hbm_slot_bits + tier_addr_bits
         + length_bits + FormatBits + QosBits + PrioBits + policy_bits;
  endfunction

  // One transfer, as the lookup stage hands it to the DMA command generator.
  typedef struct packed {
    dma_dir_e dir;
    logic [63:0] key;       // block identity; one outstanding transfer per key
    logic [63:0] src_addr;  // first byte read
    logic [63:0] dst_addr;  // first byte written
    logic [31:0] length;    // bytes, > 0
    logic [31:0] bursts;    // ceil(length / MaxBurstBytes)
  } xfer_req_t;

  // The subset of a descriptor the lookup pipeline carries from issue to commit.
  typedef struct packed {
    opcode_e opcode;
    logic shareable;
    logic [7:0] format;
    logic [7:0] qos;
    logic [15:0] tag;
    logic [15:0] tenant;
    logic [63:0] key;
    logic [63:0] hbm_addr;
    logic [63:0] tier_addr;
    logic [31:0] length;
    logic [15:0] prio;
    logic [63:0] policy;
    logic [63:0] ts_accepted;  // cycle the descriptor left the intake FIFO
  } lookup_req_t;

endpackage
