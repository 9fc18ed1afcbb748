/*!
 * \file mxplug/abi/op.h
 * \brief Operators across the boundary: the semantics of an op (MXPOpDef, after MXNet's
 * OperatorProperty) and its kernels (MXPKernelDef, one per op and device type) are separate
 * registrations, possibly from different plugins.
 *
 * Strings and arrays that a plugin hands out are borrowed: those in a def stay valid for the
 * plugin's lifetime (plugins are never unloaded), those returned for a property instance stay
 * valid until that instance is destroyed.
 */
#ifndef MXPLUG_ABI_OP_H_
#define MXPLUG_ABI_OP_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Kinds of parameter field. Frozen. \since 1.0 */
typedef enum MXPParamType {
  kMXPParamInt = 0,
  kMXPParamFloat = 1,
  kMXPParamBool = 2,
  kMXPParamString = 3,
  kMXPParamEnum = 4,  /*!< one of `choices` */
  kMXPParamShape = 5, /*!< a tuple of integers, written "(2, 3)" */
} MXPParamType;

/*! \brief One typed parameter field of an op, for documentation and the CLI. \since 1.0 */
typedef struct MXPParamDef {
  size_t struct_size;
  MXPExtension* ext;
  const char* name;
  int32_t type;              /*!< MXPParamType */
  const char* type_text;     /*!< e.g. "int", "float", "boolean", "Shape(tuple)" */
  const char* default_value; /*!< printed default; NULL when the field is required */
  int32_t has_lower_bound;
  int32_t has_upper_bound;
  double lower_bound;
  double upper_bound;
  const char* const* choices; /*!< for kMXPParamEnum */
  size_t num_choices;
  const char* doc;
} MXPParamDef;

/*! \brief A documented input of an op (MXNet's add_argument). \since 1.0 */
typedef struct MXPArgumentDef {
  size_t struct_size;
  MXPExtension* ext;
  const char* name;
  const char* type_text; /*!< e.g. "NDArray-or-Symbol" */
  const char* doc;
} MXPArgumentDef;

/*! \brief Which list of names MXPOpDef::list returns. Frozen. \since 1.0 */
typedef enum MXPListKind {
  kMXPListArguments = 0,
  kMXPListOutputs = 1,
  kMXPListAuxiliaryStates = 2,
} MXPListKind;

/*! \brief Forward or backward, for in-place options and resource requests. Frozen. \since 1.0 */
typedef enum MXPPhase {
  kMXPPhaseForward = 0,
  kMXPPhaseBackward = 1,
} MXPPhase;

/*! \brief Roles of the tensors an op sees. Frozen. \since 1.0 */
typedef enum MXPTensorRole {
  kMXPRoleInData = 0,
  kMXPRoleOutData = 1,
  kMXPRoleOutGrad = 2,
  kMXPRoleInGrad = 3,
  kMXPRoleAux = 4,
} MXPTensorRole;

/*!
 * \brief "The output dst may reuse the memory of src". A frozen value type (no struct_size):
 * forward pairs map kMXPRoleInData to kMXPRoleOutData, backward pairs map kMXPRoleOutGrad,
 * kMXPRoleInData or kMXPRoleOutData to kMXPRoleInGrad.
 * \since 1.0
 */
typedef struct MXPInplacePair {
  int32_t src_role;
  int32_t src_index;
  int32_t dst_role;
  int32_t dst_index;
} MXPInplacePair;

/*! \brief Resources an op asks for, as bits of a mask. Frozen. \since 1.0 */
typedef enum MXPResourceKind {
  kMXPResourceTempSpace = 1,
  kMXPResourceRandom = 2,
} MXPResourceKind;

/*! \brief How a kernel writes an output (MXNet's OpReqType). Frozen. \since 1.0 */
typedef enum MXPOpReq {
  kMXPNullOp = 0,
  kMXPWriteTo = 1,
  kMXPWriteInplace = 2,
  kMXPAddTo = 3,
} MXPOpReq;

/*!
 * \brief Host-owned list of shapes handed to infer_shape. Read and write it with
 * MXPHostApi::shape_get / shape_set. A shape of ndim -1 is unknown; a dimension of -1 is unknown.
 * \since 1.0
 */
typedef struct MXPShapeSlots MXPShapeSlots;

/*!
 * \brief The semantics of an op: parameters, argument names, shape and type inference, gradient
 * wiring, in-place options, resources. A "property" is an instance made from kwargs by `create`.
 * \since 1.0
 */
typedef struct MXPOpDef {
  size_t struct_size;
  MXPExtension* ext;
  const char* name; /*!< MXNet's name ("FullyConnected") or a namespaced one ("myorg.MyOp") */
  const char* doc;
  const MXPParamDef* const* params;
  size_t num_params;
  const MXPArgumentDef* const* arguments;
  size_t num_arguments;
  void* user; /*!< passed back to create and destroy */

  /*! \brief Parses kwargs into a new property. \param[out] prop new; free with destroy. */
  MXPStatus* (*create)(void* user, const char* const* keys, const char* const* values,
                       size_t num_kwargs, void** prop);
  void (*destroy)(void* user, void* prop);
  /*! \brief Names of arguments, outputs or auxiliary states (MXPListKind); borrowed. */
  MXPStatus* (*list)(void* prop, int32_t kind, size_t* count, const char* const** names);
  /*! \brief Fills unknown shapes; `complete` is set to 0 when not enough is known yet. */
  MXPStatus* (*infer_shape)(void* prop, MXPShapeSlots* in, MXPShapeSlots* out, MXPShapeSlots* aux,
                            int32_t* complete);
  /*! \brief Same for dtypes (MXPDType; -1 unknown). NULL: every dtype equals the first known. */
  MXPStatus* (*infer_type)(void* prop, int32_t* in, size_t num_in, int32_t* out, size_t num_out,
                           int32_t* aux, size_t num_aux, int32_t* complete);
  /*!
   * \brief Marks (sets to 1) the tensors that backward reads: one flag per output gradient, per
   * input, per output; the host zeroes the flags first. NULL: backward reads all of them.
   */
  MXPStatus* (*backward_dependency)(void* prop, uint8_t* out_grad, uint8_t* in_data,
                                    uint8_t* out_data);
  /*! \brief In-place pairs for a phase (MXPPhase); borrowed. NULL: none. */
  MXPStatus* (*inplace_options)(void* prop, int32_t phase, size_t* count,
                                const MXPInplacePair** pairs);
  /*! \brief Resource mask (MXPResourceKind bits) for a phase. NULL: none. */
  MXPStatus* (*resources)(void* prop, int32_t phase, uint32_t* mask);
  /*!
   * \brief How many of the outputs (the first ones) an imperative call returns; the rest are
   * internal (BatchNorm's saved mean and variance, Dropout's mask). NULL: all of them.
   * \since 1.1
   */
  MXPStatus* (*num_visible_outputs)(void* prop, size_t* count);
} MXPOpDef;

/*! \brief A resource handed to a kernel; `handle` is host-owned and opaque. \since 1.0 */
typedef struct MXPResource {
  size_t struct_size;
  MXPExtension* ext;
  int32_t kind; /*!< MXPResourceKind */
  void* handle;
} MXPResource;

/*!
 * \brief Everything a kernel call sees (MXNet's OpContext and tensor lists). Forward fills
 * in_data, out_data and aux, with one req per output; backward fills all five lists, with one
 * req per input gradient. Lists a phase does not use are empty.
 * \since 1.0
 */
typedef struct MXPKernelArgs {
  size_t struct_size;
  MXPExtension* ext;
  int32_t is_train;
  DLDevice device;
  void* stream; /*!< the device plugin's stream; NULL on a device that runs inline */
  const MXPResource* const* requested;
  size_t num_requested;
  const DLTensor* in_data;
  size_t num_in_data;
  const DLTensor* out_data;
  size_t num_out_data;
  const DLTensor* aux;
  size_t num_aux;
  const DLTensor* out_grad;
  size_t num_out_grad;
  const DLTensor* in_grad;
  size_t num_in_grad;
  const int32_t* req; /*!< MXPOpReq */
  size_t num_req;
  /*!
   * \brief Set for an asynchronous kernel only (MXPKernelDef::asynchronous), else NULL: the
   * kernel calls it exactly once, from any thread, when the work it started has ended, with NULL
   * or the status of its failure (the host takes the status). The tensors, requests and
   * resources these args point to stay valid until then; this struct itself only until forward
   * or backward returns. A forward or backward that returns a status started nothing and never
   * calls it.
   * \since 1.5
   */
  void (*on_complete)(void* token, MXPStatus* error);
  void* on_complete_token; /*!< passed back to on_complete */
} MXPKernelArgs;

/*! \brief The kernels of one op on one device type (DLDeviceType). \since 1.0 */
typedef struct MXPKernelDef {
  size_t struct_size;
  MXPExtension* ext;
  const char* op_name;
  int32_t device_type;
  void* user; /*!< passed back to create and destroy */
  /*! \brief Makes a kernel instance for the given kwargs. \param[out] state new; see destroy. */
  MXPStatus* (*create)(void* user, const char* const* keys, const char* const* values,
                       size_t num_kwargs, DLDevice device, void** state);
  void (*destroy)(void* user, void* state);
  MXPStatus* (*forward)(void* state, const MXPKernelArgs* args);
  /*! \brief NULL when the op has no backward on this device. */
  MXPStatus* (*backward)(void* state, const MXPKernelArgs* args);
  /*!
   * \brief 1: forward and backward start work and return at once; the work ends with
   * args->on_complete (Note [Asynchronous kernels] in core/src/imperative/imperative.cc). For
   * kernels whose work waits on other engine work (an op written in Python, whose code pushes
   * ops and waits for them): one that blocked a worker instead could wait for itself. The host
   * runs such a kernel alone, never joined with others in one engine function.
   * \since 1.5
   */
  int32_t asynchronous;
} MXPKernelDef;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_OP_H_
