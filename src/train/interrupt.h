#pragma once
// SIGINT / SIGTERM as a request to stop at the next safe point (after an
// optimizer step), so that the trainer can save a checkpoint and exit cleanly.
// A second signal while the first is being handled ends the process the
// default way.
namespace mtbert {

// Installs the handlers (idempotent).
void install_stop_signal_handlers();
// Whether a stop was requested since the handlers were installed.
bool stop_requested();
// The signal that requested it (0 if none): the CLI exits with 128 + signal.
int stop_signal();

}  // namespace mtbert
