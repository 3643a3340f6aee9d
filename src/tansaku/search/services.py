"""What a search may call besides the collection: the embedder, the classifier, the expander,
the reranker and the event log (:class:`SearchServices`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tansaku.collection import Collection
from tansaku.embed.cache import CachedEmbedder
from tansaku.search.classify import Classifier, RuleClassifier
from tansaku.search.events import SearchEventLog
from tansaku.search.expand import Expander, RuleExpander
from tansaku.text.synonyms import Synonyms, load_synonyms


@dataclass(frozen=True)
class SearchServices:
    """Everything the pipeline may call besides the collection itself. Frozen: a server's
    threads share one, and plugging in a part means a new one (``dataclasses.replace``,
    ``Tansaku.with_services``), never a change under a running search."""

    embedder: CachedEmbedder | None = None
    classifier: Classifier = field(default_factory=RuleClassifier)
    expander: Expander = field(default_factory=RuleExpander)
    reranker: Any = None  # tansaku.search.rerank.Reranker; None: the collection config's
    events: SearchEventLog | None = None
    # caches, not settings: loaded synonym files, rerankers built from collection configs
    synonyms_cache: dict[tuple[str, ...], Synonyms] = field(default_factory=dict, compare=False)
    rerankers: dict[str, Any] = field(default_factory=dict, compare=False)

    def synonyms(self, collection: Collection, specs: tuple[str, ...]) -> Synonyms:
        key = (str(collection.path), *specs)
        if key not in self.synonyms_cache:
            self.synonyms_cache[key] = load_synonyms(specs, base_dir=collection.path)
        return self.synonyms_cache[key]
