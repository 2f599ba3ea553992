// Lookup pipeline: takes descriptors from the intake FIFO in order, reads the key's set from
// the index, applies the command set's rules at commit, and emits the index update, the
// transfer (if any) and the completion record.
//
// Issue: the head descriptor leaves the intake FIFO (its ts_accepted) when the index is
//   ready, no descriptor in the pipeline targets the same set (so every lookup sees all
//   earlier updates, read-after-write on the SRAM is never needed), and the completion queue
//   and transfer queue have room for every descriptor already in the pipeline plus this one
//   (so commit never stalls and the fixed SRAM latency needs no back-pressure).
// Commit: ReadLatency cycles later the set's ways arrive; tag compare, tenant check,
//   victim choice (lowest invalid way) and the decision happen in that cycle
//   (its ts_lookup_done), along with one index write, one completion-queue allocation and at
//   most one transfer-queue push.
// Rules (tools/cmdset/kvdp_cmdset.tbl): set = key mod Sets, tag = next TagBits key bits;
// another tenant's entry is visible to PROMOTE, QUERY and DEMOTE only when shareable, every
// other opcode on it is DENIED; DEMOTE of a visible valid entry moves nothing
// (WRITE_ONCE_SKIP); RECOMPRESS is the only tier rewrite (TIER_REWRITTEN).
`include "kvdp_assert.svh"

module kvdp_lookup
  import kvdp_cmdset_pkg::*;
  import kvdp_pkg::*;
#(
  parameter int unsigned Sets = 256,
  parameter int unsigned Ways = 4,
  parameter int unsigned TagBits = 56,
  parameter int unsigned TenantBits = 16,
  parameter int unsigned TierAddrBits = 32,
  parameter int unsigned TierAddrLsb = 16,
  parameter int unsigned HbmSlotBits = 20,
  parameter int unsigned HbmSlotLsb = 16,
  parameter int unsigned LengthBits = 32,
  parameter int unsigned PolicyBits = 16,
  parameter int unsigned ReadLatency = 2,
  parameter int unsigned MaxBurstBytes = 4096,
  localparam int unsigned SetBits = $clog2(Sets),
  localparam int unsigned WayBits = (Ways > 1) ? $clog2(Ways) : 1,
  localparam int unsigned EntryBits = entry_bits(TagBits, TenantBits, TierAddrBits, HbmSlotBits,
                                                 LengthBits, PolicyBits),
  localparam int unsigned StageCountBits = $clog2(ReadLatency + 1)
) (
  input  logic                           clk_i,
  input  logic                           rst_ni,
  input  logic [63:0]                    cycle_i,
  // head of the intake FIFO
  input  logic                           desc_valid_i,
  input  descriptor_t                    desc_i,
  output logic                           desc_pop_o,
  // room downstream
  input  logic [31:0]                    cpl_free_i,
  input  logic [31:0]                    xfer_free_i,
  output logic [StageCountBits-1:0]      in_flight_o,
  // index
  input  logic                           idx_ready_i,
  output logic                           idx_rd_en_o,
  output logic [SetBits-1:0]             idx_rd_set_o,
  input  logic [Ways-1:0][EntryBits-1:0] idx_rd_entries_i,
  output logic                           idx_wr_en_o,
  output logic [SetBits-1:0]             idx_wr_set_o,
  output logic [WayBits-1:0]             idx_wr_way_o,
  output logic [EntryBits-1:0]           idx_wr_entry_o,
  // completion queue allocation (in descriptor order)
  output logic                           cpl_alloc_o,
  output completion_t                    cpl_rec_o,
  output logic                           cpl_done_o,
  // transfer queue
  output logic                           xfer_push_o,
  output xfer_req_t                      xfer_o,
  // events for the performance counters, one commit per cycle at most
  output logic                           ev_commit_o,
  output opcode_e                        ev_opcode_o,
  output logic                           ev_write_once_skip_o,
  output logic                           ev_rewrite_o,
  output logic                           ev_denied_o,
  output logic                           ev_miss_o,
  output logic                           ev_no_space_o
);

  localparam int unsigned BurstShift = $clog2(MaxBurstBytes);

  typedef struct packed {
    logic valid;
    logic [TagBits-1:0] tag;
    logic [TenantBits-1:0] tenant;
    logic shareable;
    logic pinned;
    logic hbm_valid;  // the block also has an HBM copy, at hbm_slot
    logic [HbmSlotBits-1:0] hbm_slot;
    logic [TierAddrBits-1:0] tier_addr;  // tier byte address >> TierAddrLsb
    logic [LengthBits-1:0] length;  // bytes of the tier copy
    logic [FormatBits-1:0] format;
    logic [QosBits-1:0] qos;
    logic [PrioBits-1:0] prio;
    logic [PolicyBits-1:0] policy;
  } entry_t;

  // ---------------------------------------------------------------------------------------
  // Issue
  // ---------------------------------------------------------------------------------------
  lookup_req_t pipe_q [ReadLatency];
  logic [ReadLatency-1:0] pipe_valid_d, pipe_valid_q;

  lookup_req_t issue_req;
  logic [SetBits-1:0] head_set;
  logic set_hazard;
  logic [StageCountBits-1:0] in_flight;
  logic issue;

  always_comb begin
    issue_req = '{
      opcode: desc_i.opcode,
      shareable: (desc_i.flags & 8'(DESC_FLAG_SHAREABLE)) != '0,
      format: desc_i.format,
      qos: desc_i.qos,
      tag: desc_i.tag,
      tenant: desc_i.tenant,
      key: desc_i.key,
      hbm_addr: desc_i.hbm_addr,
      tier_addr: desc_i.tier_addr,
      length: desc_i.length,
      prio: desc_i.prio,
      policy: desc_i.policy,
      ts_accepted: cycle_i
    };
    head_set = desc_i.key[SetBits-1:0];
    set_hazard = 1'b0;
    in_flight = '0;
    for (int unsigned stage = 0; stage < ReadLatency; stage++) begin
      if (pipe_valid_q[stage]) begin
        in_flight = in_flight + StageCountBits'(1);
        if (pipe_q[stage].key[SetBits-1:0] == head_set) begin
          set_hazard = 1'b1;
        end
      end
    end
    issue = idx_ready_i && desc_valid_i && !set_hazard
         && (32'(in_flight) < cpl_free_i) && (32'(in_flight) < xfer_free_i);
  end

  always_comb begin
    pipe_valid_d = pipe_valid_q;
    pipe_valid_d[0] = issue;
    for (int unsigned stage = 1; stage < ReadLatency; stage++) begin
      pipe_valid_d[stage] = pipe_valid_q[stage - 1];
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pipe_valid_q <= '0;
    end else begin
      pipe_valid_q <= pipe_valid_d;
    end
  end

  // Request payload: no reset, qualified by pipe_valid_q; a shift register, one stage per
  // cycle of SRAM latency.
  always_ff @(posedge clk_i) begin
    pipe_q[0] <= issue_req;
    for (int unsigned stage = 1; stage < ReadLatency; stage++) begin
      pipe_q[stage] <= pipe_q[stage - 1];
    end
  end

  assign desc_pop_o = issue;
  assign in_flight_o = in_flight;
  assign idx_rd_en_o = issue;
  assign idx_rd_set_o = head_set;

  // ---------------------------------------------------------------------------------------
  // Commit
  // ---------------------------------------------------------------------------------------
  logic commit;
  lookup_req_t req;
  entry_t entries [Ways];
  logic [Ways-1:0] hit_ways, free_ways;
  logic hit, has_free, demote_hit;
  logic [WayBits-1:0] hit_way, free_way;
  entry_t hit_entry, new_entry;
  logic own, visible;
  logic [SetBits-1:0] req_set;
  logic [TagBits-1:0] req_tag;
  logic [63:0] entry_tier_addr;
  logic [32:0] burst_sum;

  status_e status;
  logic [7:0] cpl_flags;
  logic wr_en;
  logic [WayBits-1:0] wr_way;
  entry_t wr_entry;
  logic xfer_wanted;
  xfer_req_t xfer;

  assign commit = pipe_valid_q[ReadLatency - 1];
  assign req = pipe_q[ReadLatency - 1];

  always_comb begin
    req_set = req.key[SetBits-1:0];
    req_tag = req.key[SetBits +: TagBits];
    hit_ways = '0;
    free_ways = '0;
    hit_way = '0;
    free_way = '0;
    for (int unsigned way = 0; way < Ways; way++) begin
      entries[way] = entry_t'(idx_rd_entries_i[way]);
      hit_ways[way] = entries[way].valid && (entries[way].tag == req_tag);
      free_ways[way] = !entries[way].valid;
    end
    // Lowest-numbered way wins: scan down so the last assignment is the lowest index.
    for (int way = int'(Ways) - 1; way >= 0; way--) begin
      if (hit_ways[way]) hit_way = WayBits'(way);
      if (free_ways[way]) free_way = WayBits'(way);
    end
    hit = |hit_ways;
    has_free = |free_ways;
    hit_entry = entries[hit_way];
    own = (hit_entry.tenant == req.tenant[TenantBits-1:0]);
    visible = own || hit_entry.shareable;
    entry_tier_addr = 64'(hit_entry.tier_addr) << TierAddrLsb;
    demote_hit = hit;

    new_entry = '{
      valid: 1'b1,
      tag: req_tag,
      tenant: req.tenant[TenantBits-1:0],
      shareable: req.shareable,
      pinned: 1'b0,
      hbm_valid: 1'b1,
      hbm_slot: req.hbm_addr[HbmSlotLsb +: HbmSlotBits],
      tier_addr: req.tier_addr[TierAddrLsb +: TierAddrBits],
      length: req.length[LengthBits-1:0],
      format: req.format[FormatBits-1:0],
      qos: req.qos,
      prio: req.prio,
      policy: req.policy[PolicyBits-1:0]
    };
  end

  always_comb begin
    status = STATUS_OK;
    cpl_flags = '0;
    wr_en = 1'b0;
    wr_way = hit_way;
    wr_entry = hit_entry;
    xfer_wanted = 1'b0;
    xfer = '{
      dir: DMA_DIR_TIER_TO_HBM,
      key: req.key,
      src_addr: entry_tier_addr,
      dst_addr: req.hbm_addr,
      length: 32'(hit_entry.length),
      bursts: '0
    };

    unique case (req.opcode)
      OPCODE_PROMOTE: begin
        if (!hit) begin
          status = STATUS_MISS;
        end else if (!visible) begin
          status = STATUS_DENIED;
        end else begin
          wr_en = 1'b1;
          wr_entry.hbm_valid = 1'b1;
          wr_entry.hbm_slot = req.hbm_addr[HbmSlotLsb +: HbmSlotBits];
          // The promotion carries its owner's policy word (the host's intent for the block it
          // asks for); another tenant's shared read leaves the entry's.
          if (own) wr_entry.policy = req.policy[PolicyBits-1:0];
          xfer_wanted = 1'b1;
        end
      end
      OPCODE_QUERY: begin
        if (!hit) begin
          status = STATUS_MISS;
        end else if (!visible) begin
          status = STATUS_DENIED;
        end
      end
      OPCODE_DEMOTE: begin
        if (demote_hit) begin
          if (!visible) begin
            status = STATUS_DENIED;
          end else begin
            cpl_flags = 8'(CPL_FLAG_WRITE_ONCE_SKIP);
          end
        end else if (!has_free) begin
          status = STATUS_NO_SPACE;
        end else begin
          wr_en = 1'b1;
          wr_way = free_way;
          wr_entry = new_entry;
          xfer_wanted = 1'b1;
          xfer.dir = DMA_DIR_HBM_TO_TIER;
          xfer.src_addr = req.hbm_addr;
          xfer.dst_addr = req.tier_addr;
          xfer.length = req.length;
        end
      end
      OPCODE_DISCARD, OPCODE_FREE, OPCODE_UPDATE_POLICY, OPCODE_PIN, OPCODE_UNPIN,
      OPCODE_RECOMPRESS: begin
        if (!hit) begin
          status = STATUS_MISS;
        end else if (!own) begin
          status = STATUS_DENIED;
        end else begin
          wr_en = 1'b1;
          unique case (req.opcode)
            OPCODE_DISCARD: wr_entry.hbm_valid = 1'b0;
            OPCODE_FREE: begin
              if (hit_entry.pinned) begin
                status = STATUS_PINNED;
                wr_en = 1'b0;
              end else begin
                wr_entry = '0;
              end
            end
            OPCODE_UPDATE_POLICY: begin
              wr_entry.qos = req.qos;
              wr_entry.prio = req.prio;
              wr_entry.policy = req.policy[PolicyBits-1:0];
            end
            OPCODE_PIN: wr_entry.pinned = 1'b1;
            OPCODE_UNPIN: wr_entry.pinned = 1'b0;
            default: begin  // OPCODE_RECOMPRESS
              wr_entry.length = req.length[LengthBits-1:0];
              wr_entry.format = req.format[FormatBits-1:0];
              cpl_flags = 8'(CPL_FLAG_TIER_REWRITTEN);
              xfer_wanted = 1'b1;
              xfer.dir = DMA_DIR_TIER_TO_TIER;
              xfer.dst_addr = entry_tier_addr;
              xfer.length = req.length;
            end
          endcase
        end
      end
      OPCODE_NOP: begin
        // completes OK and does nothing
      end
      default: status = STATUS_BAD_OPCODE;
    endcase

    burst_sum = {1'b0, xfer.length} + 33'(MaxBurstBytes - 1);
    xfer.bursts = 32'(burst_sum >> BurstShift);
    // A zero-length transfer is no transfer: the command completes at commit.
    if (xfer.length == '0) begin
      xfer_wanted = 1'b0;
    end
  end

  assign idx_wr_en_o = commit && wr_en;
  assign idx_wr_set_o = req_set;
  assign idx_wr_way_o = wr_way;
  assign idx_wr_entry_o = EntryBits'(wr_entry);

  assign xfer_push_o = commit && xfer_wanted;
  assign xfer_o = xfer;

  assign cpl_alloc_o = commit;
  assign cpl_done_o = !xfer_wanted;
  always_comb begin
    cpl_rec_o = '{
      tag: req.tag,
      status: status,
      flags: cpl_flags,
      bursts: xfer_wanted ? xfer.bursts : '0,
      ts_accepted: req.ts_accepted,
      ts_lookup_done: cycle_i,
      ts_transfer_done: xfer_wanted ? '0 : cycle_i
    };
  end

  assign ev_commit_o = commit;
  assign ev_opcode_o = req.opcode;
  assign ev_write_once_skip_o = commit && (cpl_flags == 8'(CPL_FLAG_WRITE_ONCE_SKIP));
  assign ev_rewrite_o = commit && (cpl_flags == 8'(CPL_FLAG_TIER_REWRITTEN));
  assign ev_denied_o = commit && (status == STATUS_DENIED);
  assign ev_miss_o = commit && (status == STATUS_MISS);
  assign ev_no_space_o = commit && (status == STATUS_NO_SPACE);

  // Descriptor bits the engine does not act on: the deadline (transfers go in descriptor
  // order), reserved bytes, and the parts of fields wider than what the index keeps.
  logic unused_desc_bits;
  assign unused_desc_bits = ^{desc_i.deadline_ns, desc_i.reserved_56, desc_i.reserved_38,
                              req.format, req.tenant, req.policy};

  // ---------------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------------
  `KVDP_ASSERT_INIT(LookupKeyBitsFit, SetBits + TagBits <= 64)
  `KVDP_ASSERT_INIT(LookupTierAddrFits, TierAddrLsb + TierAddrBits <= 64)
  `KVDP_ASSERT_INIT(LookupHbmSlotFits, HbmSlotLsb + HbmSlotBits <= 64)
  `KVDP_ASSERT_INIT(LookupFieldWidths, (TenantBits >= 1) && (TenantBits <= 16) && (LengthBits >= 1)
                                       && (LengthBits <= 32) && (PolicyBits >= 1)
                                       && (PolicyBits <= 64))
  `KVDP_ASSERT_INIT(LookupMaxBurstPowerOfTwo, (MaxBurstBytes >= 2)
                                              && ((MaxBurstBytes & (MaxBurstBytes - 1)) == 0))
  `KVDP_ASSERT_INIT(LookupEntryWidth, $bits(entry_t) == EntryBits)
  // Write-once: the only transfer that may write a tier copy where one is valid is RECOMPRESS.
  `KVDP_ASSERT(NoTierWriteOverValidCopy,
               (xfer_push_o && (xfer_o.dir != DMA_DIR_TIER_TO_HBM) && hit)
               |-> (req.opcode == OPCODE_RECOMPRESS))
  // The index never holds two valid entries with one tag in one set.
  `KVDP_ASSERT(OneMatchingWay, commit |-> $onehot0(hit_ways))
  `KVDP_ASSERT(CommitHasRoom, commit |-> ((cpl_free_i != '0) && (!xfer_push_o || (xfer_free_i != '0))))
  `KVDP_ASSERT(IssueOnlyWhenIndexReady, issue |-> idx_ready_i)

endmodule
