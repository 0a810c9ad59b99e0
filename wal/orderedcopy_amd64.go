package wal

// orderedPiece is the largest copy that memmove does with ascending
// stores on amd64: up to 256 bytes it loads everything into registers and
// stores it from the first byte to the last (overlapping at the end);
// larger copies store their head and tail last. TestOrderedCopyFault
// checks it.
const orderedPiece = 256
