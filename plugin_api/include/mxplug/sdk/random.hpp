/*!
 * \file mxplug/sdk/random.hpp
 * \brief Random numbers for kernels: the Philox4x32-10 counter-based generator (Salmon, Moraes,
 * Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and RandomStream, a
 * sequence of draws from counters the host reserved for one kernel call.
 *
 * Why counter-based: the device's random state is just (key, next counter), so the host can
 * hand out disjoint ranges to kernels in engine order, a kernel can split its range across
 * threads (block i depends only on key and counter + i), and a GPU kernel can use the same
 * numbers. Same seed, same numbers, whatever the engine or the thread count.
 */
#ifndef MXPLUG_SDK_RANDOM_HPP_
#define MXPLUG_SDK_RANDOM_HPP_

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "mxplug/sdk/xinline.hpp"

namespace mxplug {

/*! \brief One Philox4x32-10 block: 128 random bits for a 64-bit key and a 128-bit counter. */
MXPLUG_XINLINE std::array<uint32_t, 4> Philox4x32_10(uint64_t key, uint64_t counter_lo,
                                                     uint64_t counter_hi = 0) {
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;  // the Weyl key schedule
    const uint64_t p0 = uint64_t{0xD2511F53u} * c0, p1 = uint64_t{0xCD9E8D57u} * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return {c0, c1, c2, c3};
}

/*! \brief Draw d (from 0) of the range of blocks starting at `counter`: what a RandomStream's
 * (d + 1)-th NextU32 returns, computed on its own so that threads can draw in parallel. */
MXPLUG_XINLINE uint32_t PhiloxDraw(uint64_t key, uint64_t counter, uint64_t d) {
  return Philox4x32_10(key, counter + d / 4)[d % 4];
}

// What RandomStream makes of its draws, as functions of the draws alone (MXPLUG_XINLINE), so that
// a device kernel that computes draw d itself (PhiloxDraw) gets the CPU's numbers.

/*! \brief Uniform in [0, 1) from the top 24 bits of one draw (RandomStream::UniformFloat). */
MXPLUG_XINLINE float UniformFloatOf(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

/*! \brief Uniform in [0, 1) with 53 bits from two draws, 27 from the first and 26 from the second
 * (RandomStream::UniformDouble). */
MXPLUG_XINLINE double UniformDoubleOf(uint32_t first, uint32_t second) {
  const uint64_t hi = first >> 5, lo = second >> 6;
  return static_cast<double>((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

/*! \brief One of the Box-Muller pair of standard normals from u1 in (0, 1] and u2 in [0, 1): the
 * cosine one first, the sine one second (RandomStream::Normal). */
MXPLUG_XINLINE double NormalOf(double u1, double u2, bool second) {
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double angle = 6.283185307179586476925286766559 * u2;
  return second ? r * std::sin(angle) : r * std::cos(angle);
}

/*! \brief Uniform integer in [0, n) from two draws: the high 64 bits of (first:second) * n, in
 * 32-bit halves so that every compiler and device computes it (RandomStream::Below). */
MXPLUG_XINLINE uint64_t BelowOf(uint32_t first, uint32_t second, uint64_t n) {
  const uint64_t a_hi = first, a_lo = second, b_hi = n >> 32, b_lo = n & 0xFFFFFFFFu;
  const uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
  const uint64_t mid = (p0 >> 32) + (p1 & 0xFFFFFFFFu) + (p2 & 0xFFFFFFFFu);
  return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

/*!
 * \brief Draws from a range of Philox counters: 32 bits at a time, four per block. A kernel
 * gets one from Resource::get_random(n) with room for n 32-bit draws; drawing more throws,
 * because the next kernel's numbers start right after this range.
 */
class RandomStream {
 public:
  RandomStream(uint64_t key, uint64_t counter, uint64_t capacity)
      : key_(key), counter_(counter), capacity_(capacity) {}

  uint32_t NextU32() {
    if (used_ >= capacity_)
      throw std::logic_error("RandomStream: drew more than the " + std::to_string(capacity_) +
                             " 32-bit values reserved for this kernel call");
    if (used_ % 4 == 0) block_ = Philox4x32_10(key_, counter_ + used_ / 4);
    return block_[used_++ % 4];
  }
  /*! \brief Uniform in [0, 1) with 24 random bits (one draw). */
  float UniformFloat() { return UniformFloatOf(NextU32()); }
  /*! \brief Uniform in [0, 1) with 53 random bits (two draws). */
  double UniformDouble() {
    const uint32_t first = NextU32();
    return UniformDoubleOf(first, NextU32());
  }
  /*! \brief Standard normal by Box-Muller; both values of a pair are used (four draws a pair). */
  double Normal() {
    if (has_spare_) return has_spare_ = false, spare_;
    const double u1 = 1.0 - UniformDouble();  // (0, 1]: log is finite
    const double u2 = UniformDouble();
    spare_ = NormalOf(u1, u2, true);
    has_spare_ = true;
    return NormalOf(u1, u2, false);
  }
  /*!
   * \brief Uniform integer in [0, n), n > 0: (64 random bits * n) >> 64. Exactly two draws
   * whatever n, so a kernel reserves 2 per value; the bias is below n / 2^64.
   */
  uint64_t Below(uint64_t n) {
    if (n == 0) throw std::invalid_argument("RandomStream::Below: n must be positive");
    const uint32_t first = NextU32();
    return BelowOf(first, NextU32(), n);
  }

  uint64_t used() const { return used_; }
  /*! \brief Where the range starts: draw d of it is PhiloxDraw(key(), counter(), d), which a
   * device kernel computes per thread (the draws are the same on every device). */
  uint64_t key() const { return key_; }
  uint64_t counter() const { return counter_; }

 private:
  uint64_t key_, counter_, capacity_;
  uint64_t used_ = 0;
  std::array<uint32_t, 4> block_{};
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_RANDOM_HPP_
