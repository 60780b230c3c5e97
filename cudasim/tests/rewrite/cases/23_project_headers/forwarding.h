// Nothing to rewrite here, but it includes a rewritten header, so it is copied too.
#pragma once
#include "nested/launch.h"
