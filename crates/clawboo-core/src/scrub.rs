//! The secret scrubber shared by memory and the tool broker (lands with the memory issue).
