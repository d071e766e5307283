"""The training loss (Dotsformer Appendix B.1):

``L = CE(pi, softmax(policy_logits)) + lambda_v (v - target)^2 + lambda_I focal(initiative)
+ lambda_cls CE(move classes)``, with L2 as Adam's weight decay.

* policy: cross-entropy of the search's visit distribution against the softmax over the ``A`` edges
  (rows with an all-zero target, teacher positions labelled with their result only, are left out).
* value: squared error to the value target (game result, optionally mixed with the search's Q).
* initiative (models with aux heads): focal loss ``-alpha_t (1 - p_t)^gamma log p_t`` over the three
  classes capture / sacrifice / neutral; ``alpha`` balances the classes by their inverse frequency in the
  batch (``focal_alpha="balanced"``) or is 1.
* move classes (models with aux heads): cross-entropy of the 4 classes at every edge cell of the grid
  (dots and box centres are always "forbidden" and carry no information, so they are left out).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from agents.models.common import action_cells

__all__ = ["focal_loss", "total_loss"]


def focal_loss(logits: torch.Tensor, target: torch.Tensor, gamma: float, balanced: bool,
               weight: torch.Tensor | None = None) -> torch.Tensor:
    """``logits [B, K]``, ``target [B]`` -> the mean focal loss; ``weight [B]`` (0 or 1, optional): only the
    rows of weight 1 count, in the loss and in the class balance."""
    logp = F.log_softmax(logits, dim=1).gather(1, target[:, None]).squeeze(1)
    loss = -((1 - logp.exp()) ** gamma) * logp
    if weight is None:
        weight = torch.ones_like(loss)
    if balanced:
        counts = torch.bincount(target, weights=weight, minlength=logits.shape[1]).to(logits.dtype)
        alpha = weight.sum() / (counts.clamp(min=1) * (counts > 0).sum().clamp(min=1))
        loss = loss * alpha[target]
    return (loss * weight).sum() / weight.sum().clamp(min=1.0)


def total_loss(out: dict[str, torch.Tensor], batch: dict[str, torch.Tensor], cfg, board: str) -> tuple[torch.Tensor, dict]:
    """``out``: the network's outputs; ``batch``: tensors ``pi``, ``value``, ``initiative``, ``move_class``;
    ``value_mask`` (optional, 1 where the value target is known); ``safe_phase`` and ``safe_phase_mask``
    ``[B, A]`` for a model with the future head (:meth:`agents.training.replay.Replay.batch`); ``cfg``: a
    :class:`~agents.training.config.LossConfig`. Returns the loss and its parts as floats."""
    # A row whose policy target is all zero (a teacher position labelled with its result only) has no
    # policy: its policy and initiative terms are left out, the means are over the rows that have one.
    has_policy = (batch["pi"].sum(dim=1) > 0).to(out["policy_logits"].dtype)
    n_policy = has_policy.sum().clamp(min=1.0)
    policy = -(batch["pi"] * F.log_softmax(out["policy_logits"], dim=1)).sum(dim=1).sum() / n_policy
    if "value_mask" in batch:  # rows whose value target is unknown in the model's unit carry no value loss
        mask = batch["value_mask"].to(out["value"].dtype)
        value = ((out["value"] - batch["value"]) ** 2 * mask).sum() / mask.sum().clamp(min=1.0)
    else:
        value = F.mse_loss(out["value"], batch["value"])
    loss = policy + cfg.value_weight * value
    parts = {"policy_loss": policy.item(), "value_loss": value.item()}
    if "initiative_logits" in out:
        init = focal_loss(out["initiative_logits"], batch["initiative"], cfg.focal_gamma, cfg.focal_alpha == "balanced",
                          weight=has_policy)
        cells = action_cells(board).to(out["move_class_logits"].device)
        logits = out["move_class_logits"].flatten(2)[:, :, cells]  # [B, 4, A]
        cls = F.cross_entropy(logits, batch["move_class"])
        loss = loss + cfg.initiative_weight * init + cfg.move_class_weight * cls
        parts |= {"initiative_loss": init.item(), "move_class_loss": cls.item()}
    if "safe_phase" in out and "safe_phase" in batch:  # the future head, where the feature is known
        mask = batch["safe_phase_mask"].to(out["safe_phase"].dtype)
        future = ((out["safe_phase"] - batch["safe_phase"]) ** 2 * mask).sum() / mask.sum().clamp(min=1.0)
        loss = loss + cfg.future_weight * future
        parts["future_loss"] = future.item()
    return loss, parts
