// cudasim's <nvToolsExt.h>: the older path of the NVTX header (see nvtx3/nvToolsExt.h).
#pragma once
#include "nvtx3/nvToolsExt.h"
