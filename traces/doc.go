// Package traces holds the event traces of a run: the Recorder (an
// arch.Observer) that builds the in-memory Timeline (pipe slices, flags,
// buffer occupancy), the Chrome/Perfetto trace writer and reader, and what
// the terminal visualizer draws from them. report.json is package report's.
package traces
