// Spec strings: parsing, canonical round trip, and one-line errors.
#include "core/error.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace memcap;

TEST_CASE("a bare name fills every default", "[spec]") {
    REQUIRE(parse_memory_spec("softmax").canonical() == "softmax:beta=16");
    REQUIRE(parse_memory_spec("linear").canonical() == "linear:phi=proj,nu=1");
    REQUIRE(parse_task_spec("assoc_recall").canonical() == "assoc_recall:queries=32,noise=0,cosine=1,control=none,vocab=0,keys=random,steps=1000,lr=0.01,temp=0.1");
}

TEST_CASE("numbers are canonicalised and the canonical form round-trips", "[spec]") {
    REQUIRE(parse_memory_spec("softmax:beta=16.0").canonical() == "softmax:beta=16");
    REQUIRE(parse_memory_spec("softmax:beta=0.50").canonical() == "softmax:beta=0.5");
    REQUIRE(parse_memory_spec("softmax:beta=1e-5").canonical() == "softmax:beta=1e-05");
    REQUIRE(parse_task_spec("assoc_recall:noise=0.12,queries=64").canonical() ==
            "assoc_recall:queries=64,noise=0.12,cosine=1,control=none,vocab=0,keys=random,steps=1000,lr=0.01,temp=0.1");
    for (const auto& name : memory_names()) {
        const Spec s = parse_memory_spec(name);
        CAPTURE(name);
        REQUIRE(parse_memory_spec(s.canonical()) == s);
    }
    for (const auto& name : task_names()) {
        const Spec s = parse_task_spec(name);
        REQUIRE(parse_task_spec(s.canonical()) == s);
    }
    const Spec odd = parse_memory_spec("softmax:beta=0.1");
    REQUIRE(parse_memory_spec(odd.canonical()).real("beta") == 0.1);
}

TEST_CASE("a value that means left out is left out however it is written", "[spec]") {
    // The fuzzer's find: heads=00000001 kept a "heads=1" that the canonical form's parse then dropped.
    for (const char* text : {"delta:heads=1", "delta:heads=00000001", "delta:heads=+1", "delta"}) {
        CAPTURE(text);
        const Spec s = parse_memory_spec(text);
        REQUIRE_FALSE(s.has("heads"));
        REQUIRE(s.canonical() == parse_memory_spec("delta").canonical());
        REQUIRE(parse_memory_spec(s.canonical()) == s);
    }
    REQUIRE(parse_memory_spec("delta:heads=02").canonical() == parse_memory_spec("delta:heads=2").canonical());
    for (const char* text : {"softmax:slope=0", "softmax:slope=0.0", "softmax:slope=-0", "softmax:slope=0e3"}) {
        CAPTURE(text);
        REQUIRE_FALSE(parse_memory_spec(text).has("slope"));
    }
    REQUIRE(parse_memory_spec("softmax:slope=0.10").canonical() == parse_memory_spec("softmax:slope=0.1").canonical());
}

TEST_CASE("an unknown name or key lists what is accepted", "[spec]") {
    REQUIRE_THROWS_WITH(parse_memory_spec("nope"), Catch::Contains("unknown memory 'nope'") &&
                                                       Catch::Contains("softmax") && Catch::Contains("linear"));
    REQUIRE_THROWS_WITH(parse_task_spec("nope"), Catch::Contains("unknown task 'nope'") &&
                                                     Catch::Contains("assoc_recall"));
    REQUIRE_THROWS_WITH(parse_memory_spec("softmax:gamma=1"),
                        Catch::Contains("unknown key 'gamma'") && Catch::Contains("accepted: beta"));
    REQUIRE_THROWS_WITH(parse_memory_spec("linear:phi=rff"), Catch::Contains("proj, dpfp"));
}

TEST_CASE("malformed spec strings are one-line errors", "[spec]") {
    const char* bad[] = {"softmax:beta",  "softmax:=1",      ":beta=1",        "softmax:beta=1,",
                         "softmax:",      "softmax:beta=1,beta=2", "softmax:beta=abc", "softmax:beta=nan",
                         "softmax:beta=-inf", "softmax:beta=Inf", "softmax:slope=inf", "softmax:slope=-1",
                         "softmax:slope=nan", "softmax:beta=-1", "softmax:beta=1e999", "soft max",
                         "linear:nu=0",   "linear:nu=1.5",   "assoc_recall:queries=0",
                         "delta:beta=best:", "delta:beta=best:0.01//0.02", "delta:beta=best:0.01/0.010",
                         "delta:beta=best:0.01/3", "delta:beta=0.01/0.02", "delta:beta=best/0.01",
                         "linear:precision=best:int8/int3", "softmax:beta=best:1:2"};
    for (const char* text : bad) {
        CAPTURE(text);
        try {
            const std::string t(text);
            if (t.rfind("assoc", 0) == 0) parse_task_spec(t);
            else parse_memory_spec(t);
            FAIL("accepted a malformed spec");
        } catch (const UsageError& e) {
            const std::string msg = e.what();
            REQUIRE(!msg.empty());
            REQUIRE(msg.find('\n') == std::string::npos);
        }
    }
}

TEST_CASE("a race's candidates may be listed: best:v1/v2, each checked and canonical, in the order given", "[spec]") {
    const Spec s = parse_memory_spec("delta:beta=best:0.010/0.005/2,precision=best:int8/int4");
    REQUIRE(s.canonical() == "delta:beta=best:0.01/0.005/2,phi=proj,nu=1,precision=best:int8/int4");
    REQUIRE(parse_memory_spec(s.canonical()) == s);
    REQUIRE(s.best_keys() == std::vector<std::string>{"beta", "precision"});
    const auto& params = find_memory("delta").params;
    const auto info = [&](const std::string& key) {
        return *std::find_if(params.begin(), params.end(), [&](const ParamInfo& p) { return p.key == key; });
    };
    REQUIRE(s.candidates("beta", info("beta")) == std::vector<std::string>{"0.01", "0.005", "2"});
    REQUIRE(s.candidates("precision", info("precision")) == std::vector<std::string>{"int8", "int4"});
    // `best` keeps the parameter's own candidates; a parameter without them may still be listed.
    const Spec b = parse_memory_spec("delta:beta=best,phi=best:proj/dpfp");
    REQUIRE(b.candidates("beta", info("beta")) == info("beta").best);
    REQUIRE(b.candidates("phi", info("phi")) == std::vector<std::string>{"proj", "dpfp"});
    REQUIRE_THROWS_WITH(parse_memory_spec("delta:beta=best:0.01/3"), Catch::Contains("beta=3 is out of range"));
    REQUIRE_THROWS_WITH(parse_memory_spec("delta:beta=best:0.01/0.010"), Catch::Contains("'0.01' listed twice"));
}

TEST_CASE("integers are parsed strictly", "[spec]") {
    REQUIRE(parse_int("42", "x") == 42);
    REQUIRE_THROWS_WITH(parse_int("99999999999999999999", "--n"), Catch::Contains("64 bits"));
    REQUIRE_THROWS_WITH(parse_int("4x", "--n"), Catch::Contains("not an integer"));
    REQUIRE_THROWS_AS(parse_int("", "--n"), UsageError);
}

TEST_CASE("inf is a value only where a parameter declares it: the cache's beta", "[spec]") {
    const Spec hard = parse_memory_spec("softmax:beta=inf");
    REQUIRE(hard.canonical() == "softmax:beta=inf");
    REQUIRE(std::isinf(hard.real("beta")));
    REQUIRE(hard.real("beta") > 0);
    REQUIRE(parse_memory_spec(hard.canonical()) == hard);
    REQUIRE(parse_memory_spec("sliding_window:beta=inf").canonical() == "sliding_window:beta=inf");
    REQUIRE(parse_memory_spec("softmax:beta=best:1024/inf").canonical() == "softmax:beta=best:1024/inf");
    // slope = 0 binds as left out: a spec without it keeps its canonical form
    REQUIRE(parse_memory_spec("softmax:slope=0").canonical() == "softmax:beta=16");
    REQUIRE(parse_memory_spec("softmax:slope=0.5").canonical() == "softmax:beta=16,slope=0.5");
    for (const char* text : {"delta:beta=inf", "retnet:gamma=inf", "softmax:null=inf", "softmax:slope=inf"}) {
        CAPTURE(text);
        REQUIRE_THROWS_WITH(parse_memory_spec(text), Catch::Contains("'inf' is not a finite number"));
    }
    REQUIRE_THROWS_WITH(parse_task_spec("overwrite_recall:noise=inf"), Catch::Contains("'inf' is not a finite number"));
}
