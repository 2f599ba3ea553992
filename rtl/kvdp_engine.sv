// kvdp_engine: the KV data-plane engine.
//
// Takes 64-byte descriptors (kvdp_cmdset_pkg::descriptor_t) on a valid/ready port, keeps a
// set-associative index of tier-resident blocks in SRAM, turns each command into at most
// one transfer, emits that transfer as runs of burst commands on the dma_req_* port, counts
// burst completions on the dma_done_* port, and returns one 32-byte completion
// (kvdp_cmdset_pkg::completion_t) per descriptor, in descriptor order, with cycle stamps.
// The engine moves no payload itself.
//
//   desc_* -> [kvdp_fifo intake] -> [kvdp_lookup] <-> [kvdp_index: Ways x kvdp_sram]
//                                        |   \
//                                        |    -> [kvdp_dma: transfer FIFO, tracker, splitter] -> dma_req_*
//                                        v                                                   <- dma_done_*
//                                  [kvdp_cpl_queue] <- retire -----------------------------------'
//                                        |
//                                        v
//                                     cpl_*
//
// Timestamps come from a free-running cycle counter (cycle_o, 0 in the first cycle out of
// reset): ts_accepted = cycle the descriptor left the intake FIFO; ts_lookup_done = cycle of
// its commit; ts_transfer_done = cycle its last burst-done pulse arrived, or the commit cycle
// when it moved nothing.
`include "kvdp_assert.svh"

module kvdp_engine
  import kvdp_cmdset_pkg::*;
  import kvdp_pkg::*;
#(
  // index geometry and entry fields
  parameter int unsigned Sets = 256,  // power of two, >= 2
  parameter int unsigned Ways = 4,
  parameter int unsigned TagBits = 56,  // key bits above the set bits kept as tag
  parameter int unsigned TenantBits = 16,
  parameter int unsigned TierAddrBits = 32,  // tier address kept as tier_addr >> TierAddrLsb
  parameter int unsigned TierAddrLsb = 16,
  parameter int unsigned HbmSlotBits = 20,  // HBM slot kept as hbm_addr >> HbmSlotLsb
  parameter int unsigned HbmSlotLsb = 16,
  parameter int unsigned LengthBits = 32,  // bytes of the tier copy
  parameter int unsigned PolicyBits = 16,  // low bits of the descriptor's policy word
  parameter int unsigned IndexReadLatency = 2,  // SRAM read latency in cycles, >= 1
  // queues and DMA
  parameter int unsigned DescQueueDepth = 8,
  parameter int unsigned XferQueueDepth = 8,
  parameter int unsigned CplQueueDepth = 16,
  parameter int unsigned MaxBurstBytes = 4096,  // power of two
  parameter int unsigned MaxOutstanding = 4,  // transfers in flight
  parameter int unsigned MaxRunBursts = 1,  // bursts handed over per DMA-port handshake
  parameter int unsigned CounterBits = 32,
  localparam int unsigned DmaIdBits = (MaxOutstanding > 1) ? $clog2(MaxOutstanding) : 1,
  localparam int unsigned OutstandingBits = $clog2(MaxOutstanding + 1),
  localparam int unsigned SetBits = $clog2(Sets),
  localparam int unsigned EntryBits = entry_bits(TagBits, TenantBits, TierAddrBits, HbmSlotBits,
                                                 LengthBits, PolicyBits)
) (
  input  logic                                      clk_i,
  input  logic                                      rst_ni,
  // descriptor intake
  input  logic                                      desc_valid_i,
  output logic                                      desc_ready_o,
  input  descriptor_t                               desc_i,
  // completions, in descriptor order
  output logic                                      cpl_valid_o,
  input  logic                                      cpl_ready_i,
  output completion_t                               cpl_o,
  // DMA burst commands, a run of dma_req_bursts_o bursts per handshake (kvdp_dma.sv)
  // (valid/ready; fields hold while valid && !ready)
  output logic                                      dma_req_valid_o,
  input  logic                                      dma_req_ready_i,
  output logic [DmaIdBits-1:0]                      dma_req_id_o,
  output dma_dir_e                                  dma_req_dir_o,
  output logic [63:0]                               dma_req_src_addr_o,
  output logic [63:0]                               dma_req_dst_addr_o,
  output logic [31:0]                               dma_req_length_o,
  output logic [31:0]                               dma_req_bursts_o,
  output logic [63:0]                               dma_req_key_o,
  output logic                                      dma_req_last_o,
  // DMA burst completions: a pulse reports dma_done_bursts_i finished bursts of the id;
  // always accepted
  input  logic                                      dma_done_valid_i,
  input  logic [DmaIdBits-1:0]                      dma_done_id_i,
  input  logic [31:0]                               dma_done_bursts_i,
  // status
  output logic                                      init_done_o,
  output logic                                      idle_o,
  output logic [63:0]                               cycle_o,
  output logic [OutstandingBits-1:0]                outstanding_o,
  // performance counters
  output logic [CounterBits-1:0]                    perf_accepted_o,
  output logic [CounterBits-1:0]                    perf_completed_o,
  output logic [OpcodeBuckets-1:0][CounterBits-1:0] perf_opcode_o,
  output logic [CounterBits-1:0]                    perf_bursts_o,
  output logic [CounterBits-1:0]                    perf_write_once_skips_o,
  output logic [CounterBits-1:0]                    perf_rewrites_o,
  output logic [CounterBits-1:0]                    perf_denied_o,
  output logic [CounterBits-1:0]                    perf_misses_o,
  output logic [CounterBits-1:0]                    perf_no_space_o,
  // capabilities (constants): what a driver or a footprint study reads back
  output logic [31:0]                               cap_sets_o,
  output logic [31:0]                               cap_ways_o,
  output logic [31:0]                               cap_entry_bits_o,
  output logic [31:0]                               cap_max_burst_bytes_o,
  output logic [31:0]                               cap_max_outstanding_o,
  output logic [31:0]                               cap_max_run_bursts_o,
  // Status for a clock gate or a transactor: active_o says some state other than the cycle
  // counter changes at the coming edge even if no descriptor and no done pulse arrive
  // (assumes cpl_ready_i and dma_req_ready_i high). A co-simulation that finds the engine
  // quiescent advances the counter itself (through Verilator's public access,
  // cosim/kvdp_cosim.vlt) instead of clocking idle cycles.
  output logic                                      active_o,
  // commit monitor: a descriptor commits this cycle (descriptor order), and it issued a
  // transfer, so a transactor can tell which descriptor the next transfer's bursts belong to.
  output logic                                      commit_o,
  output logic                                      commit_xfer_o
);

  localparam int unsigned WayBits = (Ways > 1) ? $clog2(Ways) : 1;
  localparam int unsigned DescCountBits = $clog2(DescQueueDepth + 1);
  localparam int unsigned CplIdxBits = (CplQueueDepth > 1) ? $clog2(CplQueueDepth) : 1;
  localparam int unsigned CplCountBits = $clog2(CplQueueDepth + 1);
  localparam int unsigned StageCountBits = $clog2(IndexReadLatency + 1);

  // ---------------------------------------------------------------------------------------
  // Cycle counter
  // ---------------------------------------------------------------------------------------
  logic [63:0] cycle_d, cycle_q;
  assign cycle_d = cycle_q + 64'd1;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cycle_q <= '0;
    end else begin
      cycle_q <= cycle_d;
    end
  end

  // ---------------------------------------------------------------------------------------
  // Descriptor intake
  // ---------------------------------------------------------------------------------------
  logic desc_full, desc_empty, desc_pop, desc_accept;
  descriptor_t desc_head;
  logic [DescCountBits-1:0] desc_count;

  assign desc_ready_o = !desc_full;
  assign desc_accept = desc_valid_i && desc_ready_o;

  kvdp_fifo #(
    .Width($bits(descriptor_t)),
    .Depth(DescQueueDepth)
  ) u_intake (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .push_i(desc_accept),
    .data_i(desc_i),
    .full_o(desc_full),
    .pop_i(desc_pop),
    .data_o(desc_head),
    .empty_o(desc_empty),
    .count_o(desc_count)
  );

  // ---------------------------------------------------------------------------------------
  // Index and lookup pipeline
  // ---------------------------------------------------------------------------------------
  logic idx_ready, idx_rd_en, idx_wr_en;
  logic [SetBits-1:0] idx_rd_set, idx_wr_set;
  logic [WayBits-1:0] idx_wr_way;
  logic [Ways-1:0][EntryBits-1:0] idx_rd_entries;
  logic [EntryBits-1:0] idx_wr_entry;

  kvdp_index #(
    .Sets(Sets),
    .Ways(Ways),
    .EntryBits(EntryBits),
    .ReadLatency(IndexReadLatency)
  ) u_index (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .ready_o(idx_ready),
    .rd_en_i(idx_rd_en),
    .rd_set_i(idx_rd_set),
    .rd_entries_o(idx_rd_entries),
    .wr_en_i(idx_wr_en),
    .wr_set_i(idx_wr_set),
    .wr_way_i(idx_wr_way),
    .wr_entry_i(idx_wr_entry)
  );

  logic [31:0] cpl_free, xfer_free;
  logic [StageCountBits-1:0] lookup_in_flight;
  logic cpl_alloc, cpl_alloc_done;
  completion_t cpl_alloc_rec;
  logic xfer_push;
  xfer_req_t xfer;
  logic ev_commit, ev_write_once_skip, ev_rewrite, ev_denied, ev_miss, ev_no_space;
  opcode_e ev_opcode;

  kvdp_lookup #(
    .Sets(Sets),
    .Ways(Ways),
    .TagBits(TagBits),
    .TenantBits(TenantBits),
    .TierAddrBits(TierAddrBits),
    .TierAddrLsb(TierAddrLsb),
    .HbmSlotBits(HbmSlotBits),
    .HbmSlotLsb(HbmSlotLsb),
    .LengthBits(LengthBits),
    .PolicyBits(PolicyBits),
    .ReadLatency(IndexReadLatency),
    .MaxBurstBytes(MaxBurstBytes)
  ) u_lookup (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .cycle_i(cycle_q),
    .desc_valid_i(!desc_empty),
    .desc_i(desc_head),
    .desc_pop_o(desc_pop),
    .cpl_free_i(cpl_free),
    .xfer_free_i(xfer_free),
    .in_flight_o(lookup_in_flight),
    .idx_ready_i(idx_ready),
    .idx_rd_en_o(idx_rd_en),
    .idx_rd_set_o(idx_rd_set),
    .idx_rd_entries_i(idx_rd_entries),
    .idx_wr_en_o(idx_wr_en),
    .idx_wr_set_o(idx_wr_set),
    .idx_wr_way_o(idx_wr_way),
    .idx_wr_entry_o(idx_wr_entry),
    .cpl_alloc_o(cpl_alloc),
    .cpl_rec_o(cpl_alloc_rec),
    .cpl_done_o(cpl_alloc_done),
    .xfer_push_o(xfer_push),
    .xfer_o(xfer),
    .ev_commit_o(ev_commit),
    .ev_opcode_o(ev_opcode),
    .ev_write_once_skip_o(ev_write_once_skip),
    .ev_rewrite_o(ev_rewrite),
    .ev_denied_o(ev_denied),
    .ev_miss_o(ev_miss),
    .ev_no_space_o(ev_no_space)
  );

  // ---------------------------------------------------------------------------------------
  // DMA command generator
  // ---------------------------------------------------------------------------------------
  logic [CplIdxBits-1:0] cpl_alloc_idx, retire_cpl_idx;
  logic retire, xfer_empty, xfer_start;

  kvdp_dma #(
    .QueueDepth(XferQueueDepth),
    .MaxBurstBytes(MaxBurstBytes),
    .MaxOutstanding(MaxOutstanding),
    .MaxRunBursts(MaxRunBursts),
    .CplIdxBits(CplIdxBits)
  ) u_dma (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .xfer_push_i(xfer_push),
    .xfer_i(xfer),
    .xfer_cpl_idx_i(cpl_alloc_idx),
    .xfer_free_o(xfer_free),
    .xfer_empty_o(xfer_empty),
    .dma_req_valid_o(dma_req_valid_o),
    .dma_req_ready_i(dma_req_ready_i),
    .dma_req_id_o(dma_req_id_o),
    .dma_req_dir_o(dma_req_dir_o),
    .dma_req_src_addr_o(dma_req_src_addr_o),
    .dma_req_dst_addr_o(dma_req_dst_addr_o),
    .dma_req_length_o(dma_req_length_o),
    .dma_req_bursts_o(dma_req_bursts_o),
    .dma_req_key_o(dma_req_key_o),
    .dma_req_last_o(dma_req_last_o),
    .dma_done_valid_i(dma_done_valid_i),
    .dma_done_id_i(dma_done_id_i),
    .dma_done_bursts_i(dma_done_bursts_i),
    .retire_o(retire),
    .retire_cpl_idx_o(retire_cpl_idx),
    .outstanding_o(outstanding_o),
    .start_o(xfer_start)
  );

  // ---------------------------------------------------------------------------------------
  // Completion queue
  // ---------------------------------------------------------------------------------------
  logic [CplCountBits-1:0] cpl_count;

  kvdp_cpl_queue #(
    .Depth(CplQueueDepth)
  ) u_cpl_queue (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .cycle_i(cycle_q),
    .alloc_i(cpl_alloc),
    .alloc_rec_i(cpl_alloc_rec),
    .alloc_done_i(cpl_alloc_done),
    .alloc_idx_o(cpl_alloc_idx),
    .free_o(cpl_free),
    .count_o(cpl_count),
    .retire_i(retire),
    .retire_idx_i(retire_cpl_idx),
    .cpl_valid_o(cpl_valid_o),
    .cpl_ready_i(cpl_ready_i),
    .cpl_o(cpl_o)
  );

  // ---------------------------------------------------------------------------------------
  // Performance counters
  // ---------------------------------------------------------------------------------------
  kvdp_perf #(
    .CounterBits(CounterBits)
  ) u_perf (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .ev_accept_i(desc_accept),
    .ev_complete_i(cpl_valid_o && cpl_ready_i),
    .ev_commit_i(ev_commit),
    .ev_opcode_i(ev_opcode),
    .ev_bursts_i((dma_req_valid_o && dma_req_ready_i) ? dma_req_bursts_o : 32'd0),
    .ev_write_once_skip_i(ev_write_once_skip),
    .ev_rewrite_i(ev_rewrite),
    .ev_denied_i(ev_denied),
    .ev_miss_i(ev_miss),
    .ev_no_space_i(ev_no_space),
    .accepted_o(perf_accepted_o),
    .completed_o(perf_completed_o),
    .opcode_o(perf_opcode_o),
    .bursts_o(perf_bursts_o),
    .write_once_skips_o(perf_write_once_skips_o),
    .rewrites_o(perf_rewrites_o),
    .denied_o(perf_denied_o),
    .misses_o(perf_misses_o),
    .no_space_o(perf_no_space_o)
  );

  // ---------------------------------------------------------------------------------------
  // Status and capabilities
  // ---------------------------------------------------------------------------------------
  assign cycle_o = cycle_q;
  assign init_done_o = idx_ready;
  assign idle_o = desc_empty && (lookup_in_flight == '0) && (cpl_count == '0) && xfer_empty
               && (outstanding_o == '0) && !dma_req_valid_o;
  assign active_o = !idx_ready || desc_pop || (lookup_in_flight != '0) || cpl_valid_o
                 || dma_req_valid_o || xfer_start;
  assign commit_o = ev_commit;
  assign commit_xfer_o = xfer_push;
  assign cap_sets_o = 32'(Sets);
  assign cap_ways_o = 32'(Ways);
  assign cap_entry_bits_o = 32'(EntryBits);
  assign cap_max_burst_bytes_o = 32'(MaxBurstBytes);
  assign cap_max_outstanding_o = 32'(MaxOutstanding);
  assign cap_max_run_bursts_o = 32'(MaxRunBursts);

  // ---------------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------------
  // The generated package's byte counts and its packed layouts agree.
  `KVDP_ASSERT_INIT(EngineDescriptorLayout, $bits(descriptor_t) == 8 * DESCRIPTOR_BYTES)
  `KVDP_ASSERT_INIT(EngineCompletionLayout, $bits(completion_t) == 8 * COMPLETION_BYTES)
  `KVDP_ASSERT_INIT(EngineCplQueueDepth, (CplQueueDepth >= 1) && (CplQueueDepth <= 65536))
  `KVDP_ASSERT_INIT(EngineCounterBits, (CounterBits >= 8) && (CounterBits <= 64))
  // Every accepted descriptor is somewhere in the engine until its completion leaves: none
  // is lost and none completes twice.
  `KVDP_ASSERT(EngineDescriptorConservation,
               (perf_accepted_o - perf_completed_o)
               == (CounterBits'(desc_count) + CounterBits'(lookup_in_flight)
                   + CounterBits'(cpl_count)))
  // Valid/ready outputs: a request or completion the neighbour does not take stays offered,
  // unchanged, in the next cycle.
  `KVDP_ASSERT(EngineDmaReqHeldUnderBackpressure,
               (dma_req_valid_o && !dma_req_ready_i)
               |=> (dma_req_valid_o && $stable({dma_req_id_o, dma_req_dir_o, dma_req_src_addr_o,
                                                dma_req_dst_addr_o, dma_req_length_o, dma_req_bursts_o,
                                                dma_req_key_o, dma_req_last_o})))
  `KVDP_ASSERT(EngineCplHeldUnderBackpressure,
               (cpl_valid_o && !cpl_ready_i) |=> (cpl_valid_o && $stable(cpl_o)))
`ifdef KVDP_NO_ASSERT
  // Only the conservation check reads the intake FIFO's fill level.
  logic unused_desc_count;
  assign unused_desc_count = ^desc_count;
`endif

endmodule
