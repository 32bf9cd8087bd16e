// Accuracy and special-value tests for src/common/portable_math.h.
// Errors are measured in ulps of the correctly rounded float of the float64 reference
// (std::exp / std::erf / std::tanh in double), i.e. |got - ref| / ulp(float(ref)).
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "portable_math.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// |got - ref| in units of the spacing of floats at float(ref) (2^-149 in the subnormal range).
double ulp_error(float got, double ref) {
  const float rounded = static_cast<float>(ref);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0.0 : HUGE_VAL;
  int e = 0;
  std::frexp(static_cast<double>(rounded), &e);  // rounded = m 2^e, m in [0.5, 1)
  const int exponent = e - 1 < FLT_MIN_EXP - 1 ? FLT_MIN_EXP - 1 : e - 1;
  return std::fabs(static_cast<double>(got) - ref) / std::ldexp(1.0, exponent - (FLT_MANT_DIG - 1));
}

struct SweepResult {
  double max_ulp = 0.0;
  float worst_x = 0.0f;
  uint64_t count = 0;
};

// Visits float bit patterns in [first, last] (inclusive) with the given stride.
template <class F, class Ref>
void sweep(SweepResult& res, uint32_t first, uint32_t last, uint32_t stride, F f, Ref ref) {
  for (uint64_t u = first; u <= last; u += stride) {
    const float x = float_of(static_cast<uint32_t>(u));
    const double e = ulp_error(f(x), ref(static_cast<double>(x)));
    ++res.count;
    if (!(e <= res.max_ulp)) {  // also catches NaN results
      res.max_ulp = std::isnan(e) ? HUGE_VAL : e;
      res.worst_x = x;
    }
  }
}

// Both signs of [lo, hi] (0 <= lo <= hi), every stride-th float.
template <class F, class Ref>
SweepResult sweep_both_signs(float lo, float hi, uint32_t stride, F f, Ref ref) {
  SweepResult res;
  sweep(res, bits_of(lo), bits_of(hi), stride, f, ref);
  sweep(res, bits_of(-lo), bits_of(-hi), stride, f, ref);
  return res;
}

void report(const char* what, const SweepResult& r) {
  MESSAGE(std::string(what) << ": max error " << r.max_ulp << " ulp at x = " << r.worst_x << " ("
                            << r.count << " inputs)");
}

constexpr float kInf = std::numeric_limits<float>::infinity();
// Quiet and signalling NaNs of both signs with payloads: all must pass through bit for bit.
constexpr uint32_t kNaNs[] = {0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x7f800001u, 0xff812345u};
constexpr float kMaxUlp = 2.0f;  // the contract; measured maxima are below 1 ulp

float f_exp(float x) { return fq::portable_exp(x); }
float f_erf(float x) { return fq::portable_erf(x); }
float f_tanh(float x) { return fq::portable_tanh(x); }
double d_exp(double x) { return std::exp(x); }
double d_erf(double x) { return std::erf(x); }
double d_tanh(double x) { return std::tanh(x); }

bool same_bits(float a, float b) { return bits_of(a) == bits_of(b); }

}  // namespace

TEST_CASE("portable_exp is within 2 ulp of float64 exp over [-104, 89]") {
  SweepResult all;
  sweep(all, bits_of(0.0f), bits_of(89.0f), 127, f_exp, d_exp);
  sweep(all, bits_of(-0.0f), bits_of(-104.0f), 127, f_exp, d_exp);
  report("exp, every 127th float in [-104, 89]", all);
  CHECK(all.max_ulp <= kMaxUlp);
}

TEST_CASE("portable_exp is within 2 ulp of float64 exp for |x| in [0.25, 2] (every 7th float)") {
  // The reduced argument r = x - k ln2 sweeps its whole range (and every rounding path) here.
  const SweepResult r = sweep_both_signs(0.25f, 2.0f, 7, f_exp, d_exp);
  report("exp, every 7th float with |x| in [0.25, 2]", r);
  CHECK(r.max_ulp <= kMaxUlp);
}

TEST_CASE("portable_exp rounds subnormal results correctly to within 2 ulp (every x in [-104, -87])") {
  SweepResult r;
  sweep(r, bits_of(-87.0f), bits_of(-104.0f), 1, f_exp, d_exp);
  report("exp, every float in [-104, -87] (subnormal results)", r);
  CHECK(r.max_ulp <= kMaxUlp);
  CHECK(fq::portable_exp(-103.0f) > 0.0f);
  CHECK(fq::portable_exp(-103.0f) < FLT_MIN);
  CHECK(fq::portable_exp(-103.972f) == float_of(1u));  // smallest subnormal, 2^-149
  CHECK(fq::portable_exp(-103.98f) == 0.0f);
  CHECK(!std::signbit(fq::portable_exp(-103.98f)));
}

TEST_CASE("portable_exp overflows to +inf exactly where float64 exp exceeds FLT_MAX (every x in [88, 89])") {
  SweepResult r;
  sweep(r, bits_of(88.0f), bits_of(89.0f), 1, f_exp, d_exp);
  report("exp, every float in [88, 89]", r);
  CHECK(r.max_ulp <= kMaxUlp);  // ulp_error requires inf where float(exp(x)) is inf, and vice versa
  CHECK(fq::portable_exp(88.72f) < kInf);
  CHECK(fq::portable_exp(88.73f) == kInf);
}

TEST_CASE("portable_exp special values: NaN, infinities, zeros, huge arguments") {
  CHECK(fq::portable_exp(0.0f) == 1.0f);
  CHECK(fq::portable_exp(-0.0f) == 1.0f);
  CHECK(fq::portable_exp(kInf) == kInf);
  CHECK(fq::portable_exp(-kInf) == 0.0f);
  CHECK(!std::signbit(fq::portable_exp(-kInf)));
  CHECK(fq::portable_exp(FLT_MAX) == kInf);
  CHECK(fq::portable_exp(1e30f) == kInf);
  CHECK(fq::portable_exp(-FLT_MAX) == 0.0f);
  CHECK(fq::portable_exp(-1e30f) == 0.0f);
  CHECK(fq::portable_exp(FLT_TRUE_MIN) == 1.0f);
  CHECK(fq::portable_exp(1.0f) == static_cast<float>(std::exp(1.0)));
  for (uint32_t nan : kNaNs) {
    CHECK(bits_of(fq::portable_exp(float_of(nan))) == nan);  // NaN payload passes through
  }
}

TEST_CASE("portable_erf is within 2 ulp of float64 erf over all finite floats") {
  SweepResult all;
  sweep(all, 0u, bits_of(FLT_MAX), 509, f_erf, d_erf);
  sweep(all, bits_of(-0.0f), bits_of(-FLT_MAX), 509, f_erf, d_erf);
  report("erf, every 509th float", all);
  CHECK(all.max_ulp <= kMaxUlp);

  const SweepResult dense = sweep_both_signs(0.5f, 4.0f, 13, f_erf, d_erf);
  report("erf, every 13th float with |x| in [0.5, 4] (polynomial joins, saturation)", dense);
  CHECK(dense.max_ulp <= kMaxUlp);
}

TEST_CASE("portable_tanh is within 2 ulp of float64 tanh over all finite floats") {
  SweepResult all;
  sweep(all, 0u, bits_of(FLT_MAX), 509, f_tanh, d_tanh);
  sweep(all, bits_of(-0.0f), bits_of(-FLT_MAX), 509, f_tanh, d_tanh);
  report("tanh, every 509th float", all);
  CHECK(all.max_ulp <= kMaxUlp);

  const SweepResult dense = sweep_both_signs(0.5f, 10.0f, 17, f_tanh, d_tanh);
  report("tanh, every 17th float with |x| in [0.5, 10] (polynomial join, saturation)", dense);
  CHECK(dense.max_ulp <= kMaxUlp);
}

TEST_CASE("portable_erf and portable_tanh are odd, exact at 0 and saturate to exactly +-1") {
  // Signs are flipped on the bits: g++ -march=native folds -fmaf(a, b, c) into fmaf(-a, b, -c),
  // which differs for a zero result, so a float negation in this test would be unreliable.
  constexpr uint32_t kSign = 0x80000000u;
  for (uint32_t u = 0; u <= bits_of(kInf); u += 9973) {
    const float x = float_of(u), minus_x = float_of(u | kSign);
    CHECK(bits_of(fq::portable_erf(minus_x)) == (bits_of(fq::portable_erf(x)) ^ kSign));
    CHECK(bits_of(fq::portable_tanh(minus_x)) == (bits_of(fq::portable_tanh(x)) ^ kSign));
  }
  CHECK(same_bits(fq::portable_erf(0.0f), 0.0f));
  CHECK(same_bits(fq::portable_erf(-0.0f), -0.0f));
  CHECK(same_bits(fq::portable_tanh(0.0f), 0.0f));
  CHECK(same_bits(fq::portable_tanh(-0.0f), -0.0f));
  CHECK(fq::portable_tanh(FLT_TRUE_MIN) == FLT_TRUE_MIN);  // tanh(x) = x for tiny x
  CHECK(fq::portable_tanh(1e-10f) == 1e-10f);

  CHECK(fq::portable_erf(3.92f) == 1.0f);
  CHECK(fq::portable_erf(-4.0f) == -1.0f);
  CHECK(fq::portable_erf(FLT_MAX) == 1.0f);
  CHECK(fq::portable_erf(kInf) == 1.0f);
  CHECK(fq::portable_erf(-kInf) == -1.0f);
  CHECK(fq::portable_erf(3.9f) < 1.0f);  // erfc(3.9) = 3.5e-8 > 2^-25: not yet saturated
  CHECK(fq::portable_tanh(9.02f) == 1.0f);
  CHECK(fq::portable_tanh(-20.0f) == -1.0f);
  CHECK(fq::portable_tanh(kInf) == 1.0f);
  CHECK(fq::portable_tanh(-kInf) == -1.0f);
  CHECK(fq::portable_tanh(9.0f) < 1.0f);  // 1 - tanh(9) = 3.0e-8 > 2^-25
  for (uint32_t nan : kNaNs) {
    CHECK(bits_of(fq::portable_erf(float_of(nan))) == nan);
    CHECK(bits_of(fq::portable_tanh(float_of(nan))) == nan);
  }
}

TEST_CASE("portable math results are the same bits under every compiler and flag set (golden hash)") {
  // FNV-1a over the output bits of a fixed sweep of every 4099th float pattern. Any compiler,
  // optimisation level or backend that evaluates the value path differently changes the hash;
  // regenerating the coefficients (tools/fit_portable_math.py) changes it too: update it then.
  uint64_t h_exp = 1469598103934665603ull, h_erf = h_exp, h_tanh = h_exp;
  auto mix = [](uint64_t& h, float v) {
    const uint32_t b = bits_of(v);
    for (int i = 0; i < 4; ++i) h = (h ^ ((b >> (8 * i)) & 0xffu)) * 1099511628211ull;
  };
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
    const float x = float_of(static_cast<uint32_t>(u));
    mix(h_exp, fq::portable_exp(x));
    mix(h_erf, fq::portable_erf(x));
    mix(h_tanh, fq::portable_tanh(x));
  }
  MESSAGE("hashes: exp " << h_exp << ", erf " << h_erf << ", tanh " << h_tanh);
  CHECK(h_exp == 12933285214058845473ull);
  CHECK(h_erf == 10777386412627743498ull);
  CHECK(h_tanh == 13892603599215897914ull);
}
