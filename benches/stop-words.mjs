// The stop words our analyzer drops, from the package itself: every engine
// in a comparison is given this same list.
import { SearchIndex } from "../pkg/node.js";

export const STOP_WORDS = SearchIndex.stopWords();
