/*!
 * \file mxplug/sdk/dtype.hpp
 * \brief Element types: MXNet's type flags (MXPDType) and their DLPack equivalents, shared by
 * plugins and the core.
 */
#ifndef MXPLUG_SDK_DTYPE_HPP_
#define MXPLUG_SDK_DTYPE_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

#include "mxplug/abi/base.h"

namespace mxplug {

struct DTypeInfo {
  int flag;           // MXPDType
  const char* name;   // NumPy's name: "float32"
  uint8_t dl_code;    // DLDataTypeCode
  uint8_t bits;
};

/*! \brief Every element type that a DTypeInfo exists for, in MXPDType order. */
inline const DTypeInfo* DTypeTable(size_t* count) {
  static const DTypeInfo table[] = {
      {kMXPFloat32, "float32", kDLFloat, 32},  {kMXPFloat64, "float64", kDLFloat, 64},
      {kMXPFloat16, "float16", kDLFloat, 16},  {kMXPUint8, "uint8", kDLUInt, 8},
      {kMXPInt32, "int32", kDLInt, 32},        {kMXPInt8, "int8", kDLInt, 8},
      {kMXPInt64, "int64", kDLInt, 64},        {kMXPBool, "bool", kDLUInt, 8},
      {kMXPInt16, "int16", kDLInt, 16},        {kMXPUint16, "uint16", kDLUInt, 16},
      {kMXPUint32, "uint32", kDLUInt, 32},     {kMXPUint64, "uint64", kDLUInt, 64},
      {kMXPBfloat16, "bfloat16", kDLBfloat, 16},
  };
  *count = sizeof(table) / sizeof(table[0]);
  return table;
}

/*! \brief The info for a type flag, or nullptr for an unknown flag. */
inline const DTypeInfo* FindDType(int flag) {
  size_t n = 0;
  const DTypeInfo* t = DTypeTable(&n);
  for (size_t i = 0; i < n; ++i)
    if (t[i].flag == flag) return &t[i];
  return nullptr;
}

/*! \brief NumPy name of a type flag ("float32"), or "unknown(N)". */
inline std::string DTypeName(int flag) {
  const DTypeInfo* d = FindDType(flag);
  return d ? d->name : "unknown(" + std::to_string(flag) + ")";
}

/*! \brief Bytes per element, or 0 for an unknown flag. */
inline size_t DTypeSize(int flag) {
  const DTypeInfo* d = FindDType(flag);
  return d ? d->bits / 8 : 0;
}

inline DLDataType ToDLDataType(int flag) {
  const DTypeInfo* d = FindDType(flag);
  DLDataType t{};
  if (d) {
    t.code = d->dl_code;
    t.bits = d->bits;
    t.lanes = 1;
  }
  return t;
}

/*! \brief The type flag of a DLPack type, or kMXPUnknownDType. uint8 maps to kMXPUint8, never
 * to bool: DLPack 0.6 has no bool code. */
inline int FromDLDataType(DLDataType t) {
  if (t.lanes != 1) return kMXPUnknownDType;
  size_t n = 0;
  const DTypeInfo* table = DTypeTable(&n);
  for (size_t i = 0; i < n; ++i)
    if (table[i].dl_code == t.code && table[i].bits == t.bits && table[i].flag != kMXPBool)
      return table[i].flag;
  return kMXPUnknownDType;
}

}  // namespace mxplug

#endif  // MXPLUG_SDK_DTYPE_HPP_
