// memcap/harness/experiments/lab000.cpp — see lab000.hpp.
#include "harness/experiments/lab000.hpp"

#include "harness/experiments/published.hpp"
#include "memories/softmax/softmax_cache.hpp"

#include <cmath>

namespace memcap {
namespace {

Vec lab_read(const RowMat& keys, const RowMat& values, const Vec& q, double beta, const std::vector<char>* mask = nullptr,
             Vec* weights = nullptr) {
    SoftmaxCache cache(MemoryShape{static_cast<int>(keys.cols()), static_cast<int>(values.cols()), {}}, beta);
    cache.write_batch(keys, values);
    const Vec w = cache.weights(q, mask);
    if (weights) *weights = w;
    return values.transpose() * w;
}

bool near(double x, const std::string& key) {
    const auto& p = published(key);
    return std::abs(x - p.value) <= p.unit;
}

}  // namespace

std::vector<LabResult> run_lab() {
    std::vector<LabResult> out;
    const double scale = 1.0 / std::sqrt(2.0);
    RowMat k(3, 2), v(3, 2);
    k << 2, 0, 0, 2, 1.2f, 0.8f;
    v << 10, 0, 0, 10, 6, 4;
    Vec q(2);
    q << 2, 0;
    Vec w;
    const Vec o = lab_read(k, v, q, scale, nullptr, &w);
    out.push_back({"000.worked.out0", o(0), near(o(0), "000.worked.out0")});
    out.push_back({"000.worked.out1", o(1), near(o(1), "000.worked.out1")});
    out.push_back({"000.lab.positive", w(0), w(0) > w(2) && w(2) > w(1) && near(w(0), "000.lab.positive")});

    RowMat pk(3, 2), pv(3, 2);
    pk << k.row(2), k.row(0), k.row(1);
    pv << v.row(2), v.row(0), v.row(1);
    const double moved = (lab_read(pk, pv, q, scale) - o).cwiseAbs().maxCoeff();
    out.push_back({"000.lab.permutation", moved, near(moved, "000.lab.permutation")});

    RowMat ck(2, 2), cv(2, 1);
    ck << 1, 0, 1, 0;
    cv << 0, 100;
    Vec cq(2);
    cq << 1, 0;
    const double collided = lab_read(ck, cv, cq, scale)(0);
    out.push_back({"000.lab.collision", collided, near(collided, "000.lab.collision")});

    RowMat rv(3, 2);
    rv << 1, 0, 0, 1, 0.5f, 0.5f;
    Vec route_a(3), route_b(3);
    route_a << 0.5f, 0.5f, 0;
    route_b << 0, 0, 1;
    const double routes = ((rv.transpose() * route_a) - (rv.transpose() * route_b)).cwiseAbs().maxCoeff();
    out.push_back({"000.lab.routes", routes, near(routes, "000.lab.routes")});

    RowMat mk(3, 1), mv(3, 1);
    mk << 0.3f, -1, 2;
    mv << 2, 8, 14;
    Vec mq(1);
    mq << 5;
    const double uniform = lab_read(mk, mv, mq, 0.0)(0);
    out.push_back({"000.lab.uniform", uniform, near(uniform, "000.lab.uniform")});

    const std::vector<char> allowed = {0, 1, 1};
    Vec mw;
    lab_read(k, v, q, scale, &allowed, &mw);
    out.push_back({"000.lab.mask", mw(1), mw(0) == 0.0f && near(mw(1), "000.lab.mask") && std::abs(mw(2) - 0.845) < 5e-4});

    RowMat kk(3, 2);
    kk << 2, 0, 0, 2, 1, -2;
    const RowMat id = RowMat::Identity(3, 3);
    Vec kq(2);
    kq << 0.5f, -1.5f;
    Vec ws, wu;
    lab_read(kk, id, kq, scale, nullptr, &ws);
    lab_read(kk, id, kq, 1.0, nullptr, &wu);
    const char* names[] = {"nanu", "pustakavannu", "odide"};
    for (int i = 0; i < 3; ++i) {
        const std::string key = std::string("004.kannada.scaled.") + names[i];
        out.push_back({key, ws(i), near(ws(i), key)});
    }
    for (int i = 0; i < 3; ++i) {
        const std::string key = std::string("004.kannada.unscaled.") + names[i];
        out.push_back({key, wu(i), near(wu(i), key)});
    }
    return out;
}

}  // namespace memcap
