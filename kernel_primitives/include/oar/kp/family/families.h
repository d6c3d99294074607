// Every single-source op family, registered for backend B in one call. A
// plugin picks families and float dtypes through the Registrar; what each op
// is (its signature, its kernels) is written once, in the family headers.
#pragma once

#include "oar/kp/family/register.h"
#include "oar/kp/family/attention.h"
#include "oar/kp/family/creation.h"
#include "oar/kp/family/indexing.h"
#include "oar/kp/family/linalg.h"
#include "oar/kp/family/loss.h"
#include "oar/kp/family/norm.h"
#include "oar/kp/family/optimizer.h"
#include "oar/kp/family/pool.h"
#include "oar/kp/family/rnn.h"
#include "oar/kp/family/scan.h"
#include "oar/kp/family/shape.h"
#include "oar/kp/family/softmax.h"

namespace oar::kp::family {

template <class B>
oar_status_t register_families(Registrar& r) {
  if (r.wants(kSoftmaxFamily)) Softmax<B>::register_ops(r);
  if (r.wants(kLossFamily)) Loss<B>::register_ops(r);
  if (r.wants(kNormFamily)) Norm<B>::register_ops(r);
  if (r.wants(kPoolFamily)) Pool<B>::register_ops(r);
  if (r.wants(kIndexingFamily)) Indexing<B>::register_ops(r);
  if (r.wants(kShapeFamily)) Shape<B>::register_ops(r);
  if (r.wants(kCreationFamily)) Creation<B>::register_ops(r);
  if (r.wants(kOptimizerFamily)) Optimizer<B>::register_ops(r);
  if (r.wants(kScanFamily)) Scan<B>::register_ops(r);
  if (r.wants(kLinalgFamily))
    if (oar_status_t st = Linalg<B>::register_ops(r)) return st;
  if (r.wants(kAttentionFamily))
    if (oar_status_t st = Attention<B>::register_ops(r)) return st;
  if (r.wants(kRnnFamily))
    if (oar_status_t st = Rnn<B>::register_ops(r)) return st;
  return r.status();
}

}  // namespace oar::kp::family
