// Shared helpers for harnesses live here as they appear; the library exists
// so every harness links the same set of project layers.
namespace rdmapct::fuzz {}
