"""The plan sent on time: open and closed loops, session turns, sub-ms deadlines, loop lag, the run builder."""
