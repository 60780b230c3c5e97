// cudasim's <cuda_pipeline.h>: the asynchronous-copy primitives (see cuda_pipeline_primitives.h)
// and, in C++, cuda::pipeline (<cuda/pipeline>).
#pragma once

#include "cuda_pipeline_primitives.h"
#include "cuda/pipeline"
