// Assertion macros for the kvdp engine.
//
// Every assertion in rtl/ goes through these macros so that one define turns all of them off:
// +define+KVDP_NO_ASSERT (for a synthesis flow or a lint run of the bare logic). Simulation
// builds keep them on and pass --assert to Verilator. Each module that uses them has the
// clock clk_i and the active-low reset rst_ni; a check is not evaluated while in reset.
`ifndef KVDP_ASSERT_SVH
`define KVDP_ASSERT_SVH

`ifndef KVDP_NO_ASSERT
  // Concurrent check, sampled at every rising clock edge out of reset.
  `define KVDP_ASSERT(name_, prop_) \
    name_: assert property (@(posedge clk_i) disable iff (!rst_ni) (prop_)) \
      else $error("kvdp assertion %s", `"name_`");
  // Parameter check, evaluated once when the design elaborates.
  `define KVDP_ASSERT_INIT(name_, cond_) \
    if (!(cond_)) begin : name_ \
      $error("kvdp parameter check %s failed", `"name_`"); \
    end
`else
  `define KVDP_ASSERT(name_, prop_)
  `define KVDP_ASSERT_INIT(name_, cond_)
`endif

`endif  // KVDP_ASSERT_SVH
