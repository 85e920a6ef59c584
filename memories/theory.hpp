// memcap/memories/theory.hpp — the models of associative-recall accuracy, by subject.
//
// Pure functions (standard library and Boost.Math only) giving the probability that one
// read of `assoc_recall` is right: n random unit (key, value) pairs in R^d written, a
// stored key queried (optionally q = unit(k + σz), z ~ N(0, I)), and the read scored
// correct when it is nearest to the right value among the n stored values. One header per
// subject in memories/theory/; the derivations, their assumptions and the measured
// residuals are in docs/theory.md (sections 1–4):
//   winner_take_all.hpp  the winner-take-all integral every model ends in;
//   hrr.hpp              HRR at its natural size (section 1);
//   crosstalk.hpp        the linear grid and the softmax cache (sections 2 and 3);
//   keysets.hpp          the grid's recall as a function of its key set (section 4);
//   chains.hpp           chained lookups with cleanup;
//   forgetting.hpp       a recent pair in a long stream: the sliding window's and a decayed grid's horizon;
//   recall_model.hpp     a model as a backend's table entry declares it;
//   capacity.hpp         each model's capacity at a budget: n* where it crosses 0.9 at its best width;
//   information.hpp      the most pairs any state of B bits can hold (log2 n! <= B).
#pragma once

#include "memories/theory/capacity.hpp"
#include "memories/theory/chains.hpp"
#include "memories/theory/crosstalk.hpp"
#include "memories/theory/forgetting.hpp"
#include "memories/theory/hrr.hpp"
#include "memories/theory/information.hpp"
#include "memories/theory/keysets.hpp"
#include "memories/theory/recall_model.hpp"
#include "memories/theory/winner_take_all.hpp"
