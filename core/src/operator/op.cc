#include "mxplug/op.h"

#include "mxplug/error.h"
#include "mxplug/sdk/dtype.hpp"
#include "registry/host_api.h"

namespace mxplug {

std::string ParamInfo::Summary() const {
  std::string s = type_text.empty() ? "string" : type_text;
  if (lower_bound && upper_bound)
    s += " in [" + FieldInfo::FormatBound(*lower_bound) + ", " +
         FieldInfo::FormatBound(*upper_bound) + "]";
  else if (lower_bound)
    s += " >= " + FieldInfo::FormatBound(*lower_bound);
  else if (upper_bound)
    s += " <= " + FieldInfo::FormatBound(*upper_bound);
  if (!default_value) return s + ", required";
  bool quoted = type == kMXPParamEnum || (type == kMXPParamString && *default_value != "None");
  return s + ", default " + (quoted ? "'" + *default_value + "'" : *default_value);
}

namespace {
// Keys and values as C arrays for the ABI; the strings stay owned by the KwArgs.
struct CKwArgs {
  explicit CKwArgs(const KwArgs& kwargs) {
    for (const auto& kv : kwargs) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
  }
  std::vector<const char*> keys, values;
};
}  // namespace

OpProperty::OpProperty(std::shared_ptr<const OpEntry> op, const KwArgs& kwargs)
    : op_(std::move(op)), kwargs_(kwargs) {
  CKwArgs c(kwargs_);
  ThrowIfError(
      op_->def.create(op_->def.user, c.keys.data(), c.values.data(), c.keys.size(), &prop_),
      Where());
}

OpProperty::~OpProperty() {
  if (prop_) op_->def.destroy(op_->def.user, prop_);
}

std::vector<std::string> OpProperty::List(int32_t kind) const {
  size_t count = 0;
  const char* const* names = nullptr;
  ThrowIfError(op_->def.list(prop_, kind, &count, &names), Where());
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.push_back(detail::Str(names[i]));
  return out;
}

size_t OpProperty::NumVisibleOutputs() const {
  if (!op_->def.num_visible_outputs) return Count(kMXPListOutputs);
  size_t count = 0;
  ThrowIfError(op_->def.num_visible_outputs(prop_, &count), Where());
  return count;
}

size_t OpProperty::Count(int32_t kind) const {
  size_t count = 0;
  const char* const* names = nullptr;
  ThrowIfError(op_->def.list(prop_, kind, &count, &names), Where());
  return count;
}

bool OpProperty::InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                            std::vector<TShape>* aux) const {
  in->resize(Count(kMXPListArguments));
  out->resize(Count(kMXPListOutputs));
  aux->resize(Count(kMXPListAuxiliaryStates));
  MXPShapeSlots in_slots{in}, out_slots{out}, aux_slots{aux};
  int32_t complete = 0;
  ThrowIfError(op_->def.infer_shape(prop_, &in_slots, &out_slots, &aux_slots, &complete), Where());
  return complete != 0;
}

bool OpProperty::InferType(std::vector<int>* in, std::vector<int>* out,
                           std::vector<int>* aux) const {
  in->resize(Count(kMXPListArguments), kMXPUnknownDType);
  out->resize(Count(kMXPListOutputs), kMXPUnknownDType);
  aux->resize(Count(kMXPListAuxiliaryStates), kMXPUnknownDType);
  if (!op_->def.infer_type) {
    // MXNet's default: every input, output and auxiliary state has the first known type.
    int known = kMXPUnknownDType;
    for (const auto* list : {in, out})
      for (int t : *list)
        if (known == kMXPUnknownDType && t != kMXPUnknownDType) known = t;
    if (known == kMXPUnknownDType) return false;
    for (auto* list : {in, out, aux})
      for (int& t : *list) {
        if (t != kMXPUnknownDType && t != known)
          throw Error(
              Where() + ": inconsistent dtypes " + DTypeName(t) + " and " + DTypeName(known),
              kMXPInvalidArgument);
        t = known;
      }
    return true;
  }
  std::vector<int32_t> i32(in->begin(), in->end()), o32(out->begin(), out->end()),
      a32(aux->begin(), aux->end());
  int32_t complete = 0;
  ThrowIfError(op_->def.infer_type(prop_, i32.data(), i32.size(), o32.data(), o32.size(),
                                   a32.data(), a32.size(), &complete),
               Where());
  std::copy(i32.begin(), i32.end(), in->begin());
  std::copy(o32.begin(), o32.end(), out->begin());
  std::copy(a32.begin(), a32.end(), aux->begin());
  return complete != 0;
}

BackwardDependency OpProperty::DeclareBackwardDependency() const {
  const size_t nin = ListArguments().size(), nout = ListOutputs().size();
  BackwardDependency deps;
  if (!op_->def.backward_dependency) {
    deps.out_grad.assign(nout, true);
    deps.in_data.assign(nin, true);
    deps.out_data.assign(nout, true);
    return deps;
  }
  std::vector<uint8_t> og(nout, 0), id(nin, 0), od(nout, 0);
  ThrowIfError(op_->def.backward_dependency(prop_, og.data(), id.data(), od.data()), Where());
  deps.out_grad.assign(og.begin(), og.end());
  deps.in_data.assign(id.begin(), id.end());
  deps.out_data.assign(od.begin(), od.end());
  return deps;
}

std::vector<MXPInplacePair> OpProperty::InplaceOption(MXPPhase phase) const {
  if (!op_->def.inplace_options) return {};
  size_t count = 0;
  const MXPInplacePair* pairs = nullptr;
  ThrowIfError(op_->def.inplace_options(prop_, phase, &count, &pairs), Where());
  return std::vector<MXPInplacePair>(pairs, pairs + count);
}

uint32_t OpProperty::Resources(MXPPhase phase) const {
  if (!op_->def.resources) return 0;
  uint32_t mask = 0;
  ThrowIfError(op_->def.resources(prop_, phase, &mask), Where());
  return mask;
}

}  // namespace mxplug
