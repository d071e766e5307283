"""research/alphavit-distill/widen.py: a network given a wider input plays exactly as before, keeps its trained
boards, and an encoder that does not extend its own is refused."""

from __future__ import annotations

import pytest

from conftest import load_script

torch = pytest.importorskip("torch")

from agents.models import build_model, make_model_config  # noqa: E402
from dnb_env.core import GameState  # noqa: E402
from dnb_env.observations import encode_batch  # noqa: E402

widen = load_script("research/alphavit-distill/widen.py")


def _states(board: str) -> list[GameState]:
    s, out = GameState.new(board), []
    for a in range(0, s.num_actions - 2, 3):     # a few positions along one game
        s = s.apply(a) if s.is_legal(a) else s
        out.append(s)
    return out


def test_the_widened_network_gives_the_same_outputs_and_keeps_its_boards():
    torch.manual_seed(0)
    net = build_model(make_model_config("alphavit", board="3x3", dim=16, heads=2, layers=1, decoder_dim=16,
                                        decoder_heads=2, action_embeddings=8))
    net.trained[1, 1] = net.trained[2, 3] = True                # trained on 2x2 and 3x4
    with torch.no_grad():                                        # weights that are not all small
        net.patch_embed.weight.normal_()
    wide = widen.widen(net, "chainloop6_nim38")
    assert wide.config.encoder == "chainloop6_nim38" and wide.trained_boards() == ["2x2", "3x4"]
    assert wide.patch_embed.weight.shape[1] == 12 and torch.count_nonzero(wide.patch_embed.weight[:, 6:]) == 0
    for board in ("3x3", "2x4"):
        states = _states(board)
        narrow_planes = torch.from_numpy(encode_batch("chainloop6", states))
        wide_planes = torch.from_numpy(encode_batch("chainloop6_nim38", states))
        assert torch.count_nonzero(wide_planes[:, 6:]) > 0         # the new channels carry something
        with torch.no_grad():
            a, b = net(narrow_planes), wide(wide_planes)
        assert torch.allclose(a["policy_logits"], b["policy_logits"], atol=1e-5)
        assert torch.allclose(a["value"], b["value"], atol=1e-5)


@pytest.mark.parametrize("encoder", ["baseline4", "chainloop6", "no_such_encoder"])
def test_an_encoder_that_does_not_extend_the_old_one_is_refused(encoder):
    net = build_model(make_model_config("alphavit", board="3x3", dim=16, heads=2, layers=1, decoder_dim=16,
                                        decoder_heads=2, action_embeddings=8))
    with pytest.raises(ValueError):
        widen.widen(net, encoder)
