// The kernel lab's per-CTA timeline (-DFQ_LAB_TRACE; tools/lab/gemm_lab.cu prints it): where each stamp of a CTA
// lies in its row of the trace buffer. One definition for the kernel that writes it and the lab that reads it.
#pragma once

namespace fq::lab_trace {

constexpr int kStride = 512;  // stamps per CTA
constexpr int kUnits = 60;    // units per CTA with stamps
// Whole-CTA stamps: clock64 after the barriers' set-up and at the end, and the global timer (ns) at both, which
// gives each CTA's clock rate.
constexpr int kStartClock = 0, kEndClock = 1, kStartNs = 3, kEndNs = 4;
// Per unit j, four events from kConsumer + 4 j (warp 4: unit start, K loop end, slot acquired, stash handed over)
// and from kEpilogue + 4 j (warp 1: wait start, slots full, rows done, unit done). The row-pair kernel (one unit,
// its epilogue in the consumers) stamps unit 0's four from warp 4: its first stage landed, the K loop's end twice
// (no slot), the epilogue's end; and the CTA's end.
constexpr int kConsumer = 8, kEpilogue = 256;
constexpr int unit_slot(int role, int unit, int event) { return role + 4 * unit + event; }
// Per CTA, clocks spent in the pipeline's waits, summed over the CTA's units (kWait + counter): the producer's
// lane 0 waiting for an empty stage; lane 0 of each consumer warpgroup's first warp (+ 0 / 1 for warpgroup 0 / 1)
// waiting for a full stage and for its own MMAs (wgmma.wait_group, which includes the time they run).
constexpr int kWait = 500, kWaits = 5;
constexpr int kProducerEmpty = 0, kConsumerFull = 1, kConsumerMma = 3;

}  // namespace fq::lab_trace
