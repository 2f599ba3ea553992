// Performance counters of the engine, readable as output ports. Counters wrap at
// 2^CounterBits; each event source pulses at most once per cycle, except the burst count,
// which adds the bursts of the run handed over in the cycle.
module kvdp_perf
  import kvdp_cmdset_pkg::*;
  import kvdp_pkg::*;
#(
  parameter int unsigned CounterBits = 32
) (
  input  logic                                      clk_i,
  input  logic                                      rst_ni,
  input  logic                                      ev_accept_i,
  input  logic                                      ev_complete_i,
  input  logic                                      ev_commit_i,
  input  opcode_e                                   ev_opcode_i,
  input  logic [31:0]                               ev_bursts_i,
  input  logic                                      ev_write_once_skip_i,
  input  logic                                      ev_rewrite_i,
  input  logic                                      ev_denied_i,
  input  logic                                      ev_miss_i,
  input  logic                                      ev_no_space_i,
  output logic [CounterBits-1:0]                    accepted_o,
  output logic [CounterBits-1:0]                    completed_o,
  output logic [OpcodeBuckets-1:0][CounterBits-1:0] opcode_o,
  output logic [CounterBits-1:0]                    bursts_o,
  output logic [CounterBits-1:0]                    write_once_skips_o,
  output logic [CounterBits-1:0]                    rewrites_o,
  output logic [CounterBits-1:0]                    denied_o,
  output logic [CounterBits-1:0]                    misses_o,
  output logic [CounterBits-1:0]                    no_space_o
);

  typedef struct packed {
    logic [CounterBits-1:0] accepted;
    logic [CounterBits-1:0] completed;
    logic [OpcodeBuckets-1:0][CounterBits-1:0] opcode;
    logic [CounterBits-1:0] bursts;
    logic [CounterBits-1:0] write_once_skips;
    logic [CounterBits-1:0] rewrites;
    logic [CounterBits-1:0] denied;
    logic [CounterBits-1:0] misses;
    logic [CounterBits-1:0] no_space;
  } counters_t;

  localparam logic [CounterBits-1:0] One = CounterBits'(1);

  counters_t cnt_d, cnt_q;
  logic [$clog2(OpcodeBuckets)-1:0] bucket;

  always_comb begin
    cnt_d = cnt_q;
    bucket = (32'(ev_opcode_i) < OpcodeBuckets - 1) ? $bits(bucket)'(ev_opcode_i)
                                                     : $bits(bucket)'(OpcodeBuckets - 1);
    if (ev_accept_i) cnt_d.accepted = cnt_q.accepted + One;
    if (ev_complete_i) cnt_d.completed = cnt_q.completed + One;
    if (ev_commit_i) cnt_d.opcode[bucket] = cnt_q.opcode[bucket] + One;
    cnt_d.bursts = cnt_q.bursts + CounterBits'(ev_bursts_i);
    if (ev_write_once_skip_i) cnt_d.write_once_skips = cnt_q.write_once_skips + One;
    if (ev_rewrite_i) cnt_d.rewrites = cnt_q.rewrites + One;
    if (ev_denied_i) cnt_d.denied = cnt_q.denied + One;
    if (ev_miss_i) cnt_d.misses = cnt_q.misses + One;
    if (ev_no_space_i) cnt_d.no_space = cnt_q.no_space + One;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_q <= '0;
    end else begin
      cnt_q <= cnt_d;
    end
  end

  assign accepted_o = cnt_q.accepted;
  assign completed_o = cnt_q.completed;
  assign opcode_o = cnt_q.opcode;
  assign bursts_o = cnt_q.bursts;
  assign write_once_skips_o = cnt_q.write_once_skips;
  assign rewrites_o = cnt_q.rewrites;
  assign denied_o = cnt_q.denied;
  assign misses_o = cnt_q.misses;
  assign no_space_o = cnt_q.no_space;

endmodule
