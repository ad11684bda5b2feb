// Catch2's main(), compiled once in its own translation unit.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
