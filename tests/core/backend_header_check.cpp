// Compiled, not run: kupl_backend.h as C++98 (see backend_header_check.c).
#include "backend_header_check.c"
