// The one function of this module is inline in its header; SwiftPM wants a source file to build.
#include "CSQLiteConfig.h"
