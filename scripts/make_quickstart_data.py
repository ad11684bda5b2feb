#!/usr/bin/python3
"""Writes the quickstart data: small synthetic stand-ins for the three CS224N
tasks, in exactly the layouts of the real files (tab-separated, a header whose
first column is an unnamed index, the odd header of the SST test-student file,
no labels in the test files), so that a first run trains on something with the
real data's shape without shipping the public data sets.

    experiments/data/quickstart/  under the real files' names (FILES below), so
                                  that one variable (MTBERT_DATA) points an
                                  experiment at either

Quora has no test file here, as on these machines' ../shared/data.

The sentences come from small grammars whose labels follow from what the
sentence says, so a model can learn them, but not from any single word:

  sst   movie-review sentences; the 5-way sentiment is the score of graded
        adjectives, scaled by adverbs, flipped and damped by negation, and
        mixed across "but"/"although" clauses (the later clause weighs more).
  para  Quora-like question pairs: paraphrases reword the same intent about the
        same topic (other templates, synonyms, swapped order of compared
        items); non-paraphrases change the intent or the topic, often in
        questions that share most of their words.
  sts   descriptions of a scene (who does what to what, where); the similarity
        of two is the weighted share of those four parts that they agree on
        (related words count in part), plus a little rater noise.

A few labels are flipped or nudged at random, as in any annotated data.

Deterministic: the same bytes on every run (only random.Random with fixed
seeds, lists rather than sets). Standard library only.

    /usr/bin/python3 scripts/make_quickstart_data.py [--out DIR]
"""
import argparse
import hashlib
import os
import random
import sys
from pathlib import Path

SIZES = {"train": 1500, "dev": 300, "test": 300}
FILES = {
    ("sst", "train"): "ids-sst-train.csv",
    ("sst", "dev"): "ids-sst-dev.csv",
    ("sst", "test"): "ids-sst-test-student.csv",
    ("para", "train"): "quora-dev-split-train.csv",
    ("para", "dev"): "quora-dev-split-dev.csv",
    ("sts", "train"): "sts-train.csv",
    ("sts", "dev"): "sts-dev.csv",
    ("sts", "test"): "sts-test-student.csv",
}
SEEDS = {"sst": 1, "para": 2, "sts": 3}

# --------------------------------------------------------------------------
# SST: sentiment 0 (very negative) .. 4 (very positive)
# --------------------------------------------------------------------------

SST_ADJECTIVES = {
    2: ["brilliant", "masterful", "wonderful", "superb", "stunning", "extraordinary", "magnificent", "exhilarating"],
    1: ["good", "charming", "enjoyable", "solid", "pleasant", "engaging", "likable", "clever", "warm"],
    0: ["ordinary", "conventional", "familiar", "modest", "routine", "uneven", "serviceable", "middling"],
    -1: ["dull", "clumsy", "tedious", "flat", "forgettable", "weak", "bland", "sluggish", "messy"],
    -2: ["awful", "dreadful", "unbearable", "terrible", "painful", "disastrous", "atrocious", "insufferable"],
}
SST_ADVERBS = [  # (words, factor)
    (["somewhat", "fairly", "rather", "mildly"], 0.6),
    ([""], 1.0),
    (["very", "truly", "utterly", "remarkably", "incredibly", "thoroughly"], 1.5),
]
SST_SUBJECTS = ["the film", "this movie", "the story", "the script", "the acting", "the cast", "the direction",
                "the soundtrack", "the dialogue", "the ending", "the whole thing", "its second half", "the premise",
                "the lead performance", "the cinematography", "this sequel", "the screenplay", "the humor"]
SST_APPOSITIVES = ["which runs almost two hours", "based on a true story", "set in a small coastal town",
                   "adapted from a popular novel", "directed by a first-time filmmaker", "shot in black and white"]
# (affirmative, negated forms) of the linking verbs.
SST_VERBS = [
    ("is", ["is not", "is n't"]),
    ("feels", ["does n't feel", "never feels"]),
    ("seems", ["does n't seem", "never seems"]),
    ("turns out to be", ["does n't turn out to be"]),
    ("comes across as", ["never comes across as"]),
]
SST_NOUNS = ["film", "movie", "picture", "comedy", "drama", "thriller", "documentary"]
SST_OPENERS = ["", "", "", "", "frankly , ", "in the end , ", "as a whole , ", "from start to finish , ",
               "for better or worse , "]


def sst_phrase(rng):
    """A graded adjective with an optional adverb: (words, score)."""
    polarity = rng.choice(list(SST_ADJECTIVES))
    words, factor = rng.choice(SST_ADVERBS)
    adverb = rng.choice(words)
    adjective = rng.choice(SST_ADJECTIVES[polarity])
    return (f"{adverb} {adjective}" if adverb else adjective), max(-2.0, min(2.0, polarity * factor))


def sst_clause(rng):
    """One clause about the film: (words, score in [-2, 2])."""
    phrase, score = sst_phrase(rng)
    negated = rng.random() < 0.3
    # "not good" is mildly negative, "not awful" mildly positive: flipped and halved.
    if negated:
        score = -0.5 * score
    kind = rng.random()
    if kind < 0.6:
        subject = rng.choice(SST_SUBJECTS)
        if rng.random() < 0.15:
            subject += f" , {rng.choice(SST_APPOSITIVES)} ,"
        verb, negations = rng.choice(SST_VERBS)
        return f"{subject} {rng.choice(negations) if negated else verb} {phrase}", score
    if kind < 0.8:
        article = "an" if phrase[0] in "aeiou" else "a"
        return f"{'it is not ' if negated else 'it is '}{article} {phrase} {rng.choice(SST_NOUNS)}", score
    opener = "I did n't find" if negated else "I found"
    return f"{opener} {rng.choice(SST_SUBJECTS)} {phrase}", score


def sst_label(score):
    if score <= -1.5:
        return 0
    if score <= -0.5:
        return 1
    if score < 0.5:
        return 2
    if score < 1.5:
        return 3
    return 4


def sst_sentence(rng):
    """A review sentence and the score it expresses."""
    first, s1 = sst_clause(rng)
    form = rng.random()
    if form < 0.55:
        text, score = first, s1
    else:
        second, s2 = sst_clause(rng)
        if form < 0.75:
            text, score = f"{first} , but {second}", 0.35 * s1 + 0.65 * s2
        elif form < 0.9:
            text, score = f"{first} , and {second}", 0.5 * (s1 + s2)
        else:
            text, score = f"although {first} , {second}", 0.35 * s1 + 0.65 * s2
    text = rng.choice(SST_OPENERS) + text + " ."
    return text[0].upper() + text[1:], score


def sst_examples(rng, n):
    """n sentences with balanced classes (drawn until each target class is hit)."""
    examples = []
    for i in range(n):
        target = i % 5
        while True:
            text, score = sst_sentence(rng)
            if sst_label(score) == target:
                break
        label = target
        if rng.random() < 0.06:  # annotator disagreement: one class off
            label = min(4, max(0, label + rng.choice([-1, 1])))
        examples.append(([text], label))
    rng.shuffle(examples)
    return examples


# --------------------------------------------------------------------------
# Quora: is_duplicate 0.0 / 1.0
# --------------------------------------------------------------------------

# Each intent: templates that all ask the same thing about a topic {t}.
PARA_INTENTS = {
    "learn": ["How can I learn {t}?", "What is the best way to learn {t}?", "How do I get started with {t}?",
              "What should I do to learn {t} quickly?", "Where should a beginner start with {t}?"],
    "improve": ["How can I get better at {t}?", "How do I improve my skills in {t}?", "What are some tips to improve at {t}?",
                "How can I become really good at {t}?"],
    "hard": ["Is {t} hard to learn?", "How difficult is it to learn {t}?", "Is learning {t} difficult?"],
    "time": ["How long does it take to learn {t}?", "How much time do I need to learn {t}?",
             "How many months does it take to learn {t}?"],
    "books": ["What are the best books for learning {t}?", "Which books should I read to learn {t}?",
              "Can you recommend some good books on {t}?"],
    "career": ["Can I get a job if I know {t}?", "Is {t} a good career choice?", "What jobs can I get with {t}?"],
    "popular": ["Why is {t} so popular?", "What makes {t} so popular?", "Why do so many people like {t}?"],
    "online": ["Where can I learn {t} online for free?", "What are the best free websites to learn {t}?",
               "Are there any free online courses for {t}?"],
}
# Intents easily mistaken for each other: the hard negatives.
PARA_CONFUSABLE = {"learn": ["improve", "time", "hard", "online"], "improve": ["learn", "hard"],
                   "hard": ["time", "learn"], "time": ["hard", "learn"], "books": ["online", "learn"],
                   "career": ["popular", "learn"], "popular": ["career", "hard"], "online": ["books", "learn"]}
# Topics: each a list of names for the same thing; topics in one family are related.
PARA_TOPICS = [
    ("code", ["Python", "Python programming", "programming in Python"]),
    ("code", ["Java", "Java programming", "programming in Java"]),
    ("code", ["JavaScript", "JavaScript programming"]),
    ("music", ["guitar", "the guitar"]),
    ("music", ["piano", "the piano"]),
    ("music", ["singing"]),
    ("language", ["Spanish", "the Spanish language"]),
    ("language", ["French", "the French language"]),
    ("language", ["German", "the German language"]),
    ("data", ["machine learning", "ML"]),
    ("data", ["data science"]),
    ("data", ["statistics", "stats"]),
    ("math", ["calculus"]),
    ("math", ["linear algebra"]),
    ("art", ["drawing", "sketching"]),
    ("art", ["painting", "oil painting"]),
    ("art", ["photography", "taking photos"]),
    ("game", ["chess", "the game of chess"]),
    ("game", ["poker"]),
    ("skill", ["public speaking", "speaking in public"]),
    ("skill", ["cooking", "cookery"]),
    ("skill", ["swimming"]),
]
# Two-topic questions; order of the topics does not change the question.
PARA_COMPARE = {
    "better": ["Which is better, {a} or {b}?", "Should I learn {a} or {b}?", "{a} or {b}: which one should I choose?"],
    "difference": ["What is the difference between {a} and {b}?", "How is {a} different from {b}?",
                   "How do {a} and {b} differ?"],
}


def para_topic_text(rng, topic):
    return rng.choice(PARA_TOPICS[topic][1])


def para_fill(template, **names):
    text = template.format(**names)
    return text[0].upper() + text[1:]


def para_related_topic(rng, topic):
    family = PARA_TOPICS[topic][0]
    related = [i for i, (f, _) in enumerate(PARA_TOPICS) if f == family and i != topic]
    if related and rng.random() < 0.7:
        return rng.choice(related)
    return rng.choice([i for i in range(len(PARA_TOPICS)) if i != topic])


def para_single_pair(rng, duplicate):
    intent = rng.choice(list(PARA_INTENTS))
    topic = rng.randrange(len(PARA_TOPICS))
    template = rng.choice(PARA_INTENTS[intent])
    first = para_fill(template, t=para_topic_text(rng, topic))
    if duplicate:
        # Another wording of the same question: another name for the topic in
        # the same words, or another template.
        keep = len(PARA_TOPICS[topic][1]) > 1 and rng.random() < 0.5
        while True:
            second = para_fill(template if keep else rng.choice(PARA_INTENTS[intent]),
                               t=para_topic_text(rng, topic))
            if second != first:
                return first, second
    kind = rng.random()
    if kind < 0.5:  # unrelated questions
        other_topic = para_related_topic(rng, topic)
        other_intent = rng.choice([i for i in PARA_INTENTS if i != intent])
    elif kind < 0.8:  # another, often confusable, question about the same topic
        other_topic = topic
        other_intent = rng.choice(PARA_CONFUSABLE[intent] if rng.random() < 0.7 else
                                  [i for i in PARA_INTENTS if i != intent])
    else:
        # The same question about another (often related) topic, half the
        # time in the same words: only the topic tells them apart.
        other_topic, other_intent = para_related_topic(rng, topic), intent
        if rng.random() < 0.5:
            return first, para_fill(template, t=para_topic_text(rng, other_topic))
    return first, para_fill(rng.choice(PARA_INTENTS[other_intent]), t=para_topic_text(rng, other_topic))


def para_compare_pair(rng, duplicate):
    intent = rng.choice(list(PARA_COMPARE))
    a = rng.randrange(len(PARA_TOPICS))
    b = para_related_topic(rng, a)
    first = para_fill(rng.choice(PARA_COMPARE[intent]), a=para_topic_text(rng, a), b=para_topic_text(rng, b))
    if duplicate:
        if rng.random() < 0.5:
            a, b = b, a
        while True:
            second = para_fill(rng.choice(PARA_COMPARE[intent]), a=para_topic_text(rng, a), b=para_topic_text(rng, b))
            if second != first:
                return first, second
    if rng.random() < 0.5:  # the other comparison of the same two topics
        other = [i for i in PARA_COMPARE if i != intent][0]
        return first, para_fill(rng.choice(PARA_COMPARE[other]), a=para_topic_text(rng, a), b=para_topic_text(rng, b))
    c = para_related_topic(rng, b)
    while c == a:
        c = para_related_topic(rng, b)
    return first, para_fill(rng.choice(PARA_COMPARE[intent]), a=para_topic_text(rng, a), b=para_topic_text(rng, c))


def para_examples(rng, n):
    examples = []
    for _ in range(n):
        duplicate = rng.random() < 0.45
        pair = para_compare_pair(rng, duplicate) if rng.random() < 0.15 else para_single_pair(rng, duplicate)
        if rng.random() < 0.5:
            pair = (pair[1], pair[0])
        label = duplicate if rng.random() >= 0.03 else not duplicate
        examples.append((list(pair), "1.0" if label else "0.0"))
    return examples


# --------------------------------------------------------------------------
# STS: similarity 0.0 .. 5.0
# --------------------------------------------------------------------------

# Groups of interchangeable words; groups sharing a family are related.
STS_AGENTS = {
    "person": [("male", ["a man", "a guy"]), ("male", ["a boy", "a young boy"]),
               ("female", ["a woman", "a lady"]), ("female", ["a girl", "a young girl"]),
               ("cook", ["a chef", "a cook"])],
    "animal": [("dog", ["a dog", "a puppy"]), ("dog", ["a big dog", "a large dog"]),
               ("cat", ["a cat", "a kitten"])],
}
# Scenes: who can do them, the actions (family, [(ing, s-form, participle)]), the objects.
STS_SCENES = [
    ("person", [("music", [("playing", "plays", "played")])],
     [("string", ["a guitar", "an acoustic guitar"]), ("string", ["a violin", "a fiddle"]),
      ("keys", ["a piano", "a keyboard"]), ("drum", ["a drum", "a snare drum"])]),
    ("person", [("cut", [("cutting", "cuts", "cut"), ("slicing", "slices", "sliced"), ("chopping", "chops", "chopped")]),
                ("cut", [("peeling", "peels", "peeled")]),
                ("eat", [("eating", "eats", "eaten")])],
     [("veg", ["an onion", "a red onion"]), ("veg", ["a potato", "a big potato"]), ("veg", ["a carrot"]),
      ("fruit", ["an apple", "a green apple"]), ("fruit", ["a banana"])]),
    ("person", [("ride", [("riding", "rides", "ridden")])],
     [("cycle", ["a bike", "a bicycle"]), ("cycle", ["a motorcycle", "a motorbike"]), ("beast", ["a horse"])]),
    ("person", [("read", [("reading", "reads", "read")]), ("write", [("writing", "writes", "written")])],
     [("text", ["a book", "a novel"]), ("text", ["a letter"]), ("news", ["a newspaper", "a magazine"])]),
    ("animal", [("chase", [("chasing", "chases", "chased")]), ("carry", [("carrying", "carries", "carried")]),
                ("carry", [("holding", "holds", "held")])],
     [("toy", ["a ball", "a red ball"]), ("toy", ["a frisbee"]), ("wood", ["a stick", "a branch"])]),
]
STS_PLACES = [("show", ["on a stage", "on stage"]), ("show", ["in a concert hall"]),
              ("food", ["in the kitchen", "in a kitchen"]), ("food", ["in a restaurant"]),
              ("out", ["in the park", "in a park"]), ("out", ["in the garden", "in a garden"]),
              ("out", ["on the street", "on a sidewalk"]), ("water", ["at the beach", "on the beach"]),
              ("home", ["in the living room", "at home"])]
# How much each part of the scene counts; they add up to 5.
STS_WEIGHTS = {"agent": 1.25, "action": 1.5, "object": 1.25, "place": 1.0}
STS_RELATED = 0.4  # share of a part's weight for a related word (a man / a boy)
STS_MISSING = 0.5  # share for a place that one sentence leaves out


def sts_scene(rng):
    scene = rng.randrange(len(STS_SCENES))
    kind, actions, objects = STS_SCENES[scene]
    return {"scene": scene, "agent": (kind, rng.randrange(len(STS_AGENTS[kind]))),
            "action": rng.randrange(len(actions)), "object": rng.randrange(len(objects)),
            "place": rng.randrange(len(STS_PLACES)) if rng.random() < 0.8 else None}


def sts_pick(rng, choices, current, families, mode):
    """Index of the same, a related (same family) or a different group."""
    if mode == "same":
        return current
    related = [i for i in range(len(choices)) if i != current and families[i] == families[current]]
    if mode == "related" and related:
        return rng.choice(related)
    others = [i for i in range(len(choices)) if i != current and families[i] != families[current]]
    return rng.choice(others or related or [current])


def sts_variant(rng, first):
    """A second scene agreeing with the first on a random share of its parts."""
    if rng.random() < 0.1:  # a scene of another kind altogether
        second = sts_scene(rng)
        while second["scene"] == first["scene"]:
            second = sts_scene(rng)
        return second
    share = rng.random()

    def mode():
        u = rng.random()
        return "same" if u < share else ("related" if u < share + (1 - share) * 0.45 else "different")

    kind, actions, objects = STS_SCENES[first["scene"]]
    agents = STS_AGENTS[first["agent"][0]]
    second = dict(first)
    second["agent"] = (kind, sts_pick(rng, agents, first["agent"][1], [f for f, _ in agents], mode()))
    second["action"] = sts_pick(rng, actions, first["action"], [f for f, _ in actions], mode())
    second["object"] = sts_pick(rng, objects, first["object"], [f for f, _ in objects], mode())
    if first["place"] is None or rng.random() < 0.15:
        second["place"] = None if rng.random() < 0.5 else rng.randrange(len(STS_PLACES))
    else:
        second["place"] = sts_pick(rng, STS_PLACES, first["place"], [f for f, _ in STS_PLACES], mode())
    return second


def sts_similarity(a, b):
    """The weighted share of the scene the two sentences agree on, 0..5."""
    def part(weight, same, related):
        return weight if same else (weight * STS_RELATED if related else 0.0)

    if a["scene"] != b["scene"]:
        score = 0.0
        if a["agent"] == b["agent"]:
            score += STS_WEIGHTS["agent"]
    else:
        kind, actions, objects = STS_SCENES[a["scene"]]
        agents = STS_AGENTS[kind]
        score = part(STS_WEIGHTS["agent"], a["agent"] == b["agent"],
                     agents[a["agent"][1]][0] == agents[b["agent"][1]][0])
        score += part(STS_WEIGHTS["action"], a["action"] == b["action"],
                      actions[a["action"]][0] == actions[b["action"]][0])
        score += part(STS_WEIGHTS["object"], a["object"] == b["object"],
                      objects[a["object"]][0] == objects[b["object"]][0])
    if a["place"] is None and b["place"] is None:
        score += STS_WEIGHTS["place"]
    elif a["place"] is None or b["place"] is None:
        score += STS_WEIGHTS["place"] * STS_MISSING
    else:
        score += part(STS_WEIGHTS["place"], a["place"] == b["place"],
                      STS_PLACES[a["place"]][0] == STS_PLACES[b["place"]][0])
    return score


def sts_text(rng, s):
    """One of several wordings of a scene."""
    kind, actions, objects = STS_SCENES[s["scene"]]
    agent = rng.choice(STS_AGENTS[kind][s["agent"][1]][1])
    if rng.random() < 0.3:
        agent = "the" + agent[agent.index(" "):]
    ing, s_form, participle = rng.choice(actions[s["action"]][1])
    obj = rng.choice(objects[s["object"]][1])
    place = "" if s["place"] is None else " " + rng.choice(STS_PLACES[s["place"]][1])
    form = rng.random()
    if form < 0.5:
        text = f"{agent} is {ing} {obj}{place}."
    elif form < 0.75:
        text = f"{agent} {s_form} {obj}{place}."
    elif form < 0.9:
        text = f"{obj} is being {participle} by {agent}{place}."
    elif place:
        text = f"{place.strip()}, {agent} is {ing} {obj}."
    else:
        text = f"{agent} is busy {ing} {obj}."
    return text[0].upper() + text[1:]


def sts_examples(rng, n):
    examples = []
    for _ in range(n):
        first = sts_scene(rng)
        second = sts_variant(rng, first)
        score = sts_similarity(first, second) + rng.gauss(0.0, 0.25)
        score = min(5.0, max(0.0, score))
        examples.append(([sts_text(rng, first), sts_text(rng, second)], f"{round(score, 1):.1f}"))
    return examples


# --------------------------------------------------------------------------
# Files in the CS224N layouts
# --------------------------------------------------------------------------

def example_id(task, split, i):
    """25 hex digits, like the real ids."""
    return hashlib.md5(f"mtbert-quickstart/{task}/{split}/{i}".encode()).hexdigest()[:25]


def sst_file(split, examples):
    if split == "test":  # ids-sst-test-student.csv: an extra leading column, no labels
        lines = ["0\t\tid\tsentence"]
        lines += [f"{i + 1}\t{i}.0\t{example_id('sst', split, i)}\t {texts[0]}" for i, (texts, _) in enumerate(examples)]
    else:
        lines = ["\tid\tsentence\tsentiment"]
        lines += [f"{i}\t{example_id('sst', split, i)}\t {texts[0]}\t{label}" for i, (texts, label) in enumerate(examples)]
    return lines


def pair_file(task, split, examples, label_column, rng):
    # The real pair files keep the original data set's row numbers as index.
    rows = sorted(rng.sample(range(1, 100000), len(examples)))
    rng.shuffle(rows)
    header = "\tid\tsentence1\tsentence2"
    if split == "test":
        lines = [header]
        lines += [f"{rows[i]}\t{example_id(task, split, i)}\t{a}\t{b}" for i, ((a, b), _) in enumerate(examples)]
    else:
        lines = [header + "\t" + label_column]
        lines += [f"{rows[i]}\t{example_id(task, split, i)}\t{a}\t{b}\t{label}"
                  for i, ((a, b), label) in enumerate(examples)]
    return lines


def write_atomically(path, text):
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def generate(out):
    out.mkdir(parents=True, exist_ok=True)
    makers = {"sst": sst_examples, "para": para_examples, "sts": sts_examples}
    written = []
    for (task, split), name in FILES.items():
        make, n = makers[task], SIZES[split]
        rng = random.Random(f"{task}/{split}/{SEEDS[task]}")
        examples = make(rng, n)
        if task == "sst":
            lines = sst_file(split, examples)
        else:
            lines = pair_file(task, split, examples, "is_duplicate" if task == "para" else "similarity", rng)
        path = out / name
        write_atomically(path, "\n".join(lines) + "\n")
        written.append(path)
    return written


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parents[1] / "experiments" / "data" / "quickstart"
    parser.add_argument("--out", type=Path, default=default, help=f"output folder (default: {default})")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
