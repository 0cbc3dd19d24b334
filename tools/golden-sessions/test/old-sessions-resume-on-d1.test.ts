import { replayCorpus } from './replay-corpus.ts';

// Sessions written by earlier releases on d1 load, resume and continue under the current code.
replayCorpus('d1');
