#line 1 "@CASES@/23_project_headers/forwarding.h"
// Nothing to rewrite here, but it includes a rewritten header, so it is copied too.
#pragma once
#include "../4/launch.h"
