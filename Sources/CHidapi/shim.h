#include <hidapi.h>
