from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cache.evalset import load_groups, load_pairs
from cache.facts import analyse
from cache.guard import verify, verify_rules

REFUSED = [  # (query, cached, the check that must refuse)
    ("What is the capital of Austria?", "What is the capital of Australia?", "terms"),
    ("Convert 10 kilometers to miles.", "Convert 10 miles to kilometers.", "direction"),
    ("Convert 12 miles to kilometers.", "Convert 10 miles to kilometers.", "numbers"),
    ("Who was the second person to walk on the moon?", "Who was the first person to walk on the moon?", "numbers"),
    ("What is 25% of 80?", "What is 15% of 80?", "numbers"),
    ("What percent of 80 is 15?", "What is 15% of 80?", "numbers"),
    ("Why is it not safe to eat raw cookie dough?", "Is it safe to eat raw cookie dough?", "negation"),
    ("How many grams are in a pound?", "How many ounces are in a pound?", "terms"),
    ("How do I unset an environment variable in Linux?", "How do I set an environment variable in Linux?", "terms"),
    ("What is the smallest ocean on Earth?", "What is the largest ocean on Earth?", "poles"),
    ("How do I turn on notifications on Android?", "How do I turn off notifications on Android?", "poles"),
    ("What is the capital of France?", "Quelle est la capitale de la France ?", "language"),
    ("When was penicillin discovered?", "Who discovered penicillin?", "question"),
    ("How do I convert an integer to a string in JavaScript?", "How do I convert a string to an integer in JavaScript?", "direction"),
    ("How long does it take to fly from New York to London?", "How long does it take to fly from London to New York?", "direction"),
    ("Did it rain in Seattle yesterday?", "Is it going to rain in Seattle tomorrow?", "poles"),
    ("Should I use a comma before \"that\"?", "Should I use a comma before \"which\"?", "quoted"),
    ("How do I declare a constant in C#?", "How do I declare a constant in C++?", "terms"),
    ("How do I calculate EBITDA?", "What is EBITDA?", "intent"),
    ("How is GDP calculated?", "What is GDP?", "intent"),
    ("How long should I brine a turkey?", "How do I brine a turkey?", "intent"),
    ("Do I need gap insurance?", "What is gap insurance?", "intent"),
    ("Who created the Eisenhower matrix?", "What is the Eisenhower matrix?", "intent"),
    ("What is a good cap rate?", "What is a cap rate?", "intent"),
    ("What is the Eiffel Tower made of?", "What is the Eiffel Tower?", "intent"),
    ("What is the black box on a plane made of?", "What is the black box on a plane?", "intent"),
    ("What is the longest river in the United States?", "What is the longest river in the world?", "terms"),
    ("How many planes are in the air over the US right now?", "How many planes are in the air right now?", "terms"),
    ("Explain the offside rule in American football.", "Explain the offside rule in football.", "terms"),
    ("Which foods are high in vitamin K?", "Which foods are high in vitamin C?", "terms"),
    ("What is the weather like in Lisbon in May?", "What is the weather like in Lisbon?", "terms"),
    ("How long can I leave my puppy alone?", "How long can I leave my dog alone?", "terms"),
    # the question word's role swapped: same words, opposite question
    ("What do koalas eat?", "What eats koalas?", "direction"),
    ("Who fought Batman?", "Who did Batman fight?", "direction"),
    ("What does acne cause?", "What causes acne?", "direction"),
    # a form of answer the other request does not mention
    ("Write a poem about photosynthesis.", "Explain photosynthesis.", "form"),
    ("Tell me a joke about the ocean.", "Tell me about the ocean.", "form"),
    ("Give me 3 riddles for kids with answers.", "Give me 3 riddles for kids.", "form"),
    ("Summarize the French Revolution.", "What caused the French Revolution?", "form"),
    ("Explain TCP briefly.", "Explain TCP in detail.", "form"),
    ("Compare Python and Go in a table.", "Compare Python and Go.", "form"),
    ("define osmosis", "What causes osmosis?", "intent"),
    ("What causes hiccups?", "What are hiccups?", "intent"),
    ("ebitda meaning", "How do I calculate EBITDA?", "intent"),
    ("How did Marie Curie die?", "When did Marie Curie die?", "intent"),
    ("Which planets have rings?", "How many planets have rings?", "intent"),
    ("What does the pancreas do?", "Where is the pancreas?", "intent"),
    ("How do I convert XML to a Python dictionary?", "How do I convert a Python dictionary to XML?", "direction"),
    ("What is 5/8 as a decimal?", "What is 8/5 as a decimal?", "numbers"),
    ("What is 3 to the power of 4?", "What is 4 to the power of 3?", "numbers"),
    ("How many hectares are in an acre?", "How many acres are in a hectare?", "direction"),
    ("How many gigabytes are in a megabyte?", "How many MB are in a GB?", "direction"),
    ("How many megabits are in a gigabyte?", "How many megabytes are in a gigabyte?", "terms"),
    ("What is the population of Mexico City?", "What is the population of Mexico?", "terms"),
    ("Can I paint over tiles?", "Can I tile over paint?", "direction"),
    ("How do I convert a string to a date in Python?", "How do I convert a date to a string in Python?", "direction"),
    ("How many satoshis are in a bitcoin?", "How many bitcoins are in a satoshi?", "direction"),
    # a swap of one thing for another, the other way round (stop 18: served before, found by a fresh probe)
    ("Can I use vegetable oil instead of olive oil in brownies?",
     "Can I use olive oil instead of vegetable oil in brownies?", "direction"),
    ("Can I substitute butter for margarine in cookies?", "Can I substitute margarine for butter in cookies?",
     "direction"),
    ("Can I use honey in place of sugar in tea?", "Can I use sugar in place of honey in tea?", "direction"),
    ("How do I replace sugar with honey in baking?", "How do I replace honey with sugar in baking?", "direction"),
    # a light word written in both, one of its uses swapped for another
    ("Which US state has the most state parks?", "Which US state has the most national parks?", "light"),
    ("How many periods are in the periodic table?", "How many elements are on the periodic table?", "light"),
    # what "the X way to …" optimises
    ("What's the easiest way to get from Heathrow to central London?",
     "What's the fastest way to get from Heathrow to central London?", "intent"),
    # all of them, or the one
    ("Who were all the drummers the Beatles ever had?", "Who was the drummer of the Beatles?", "question"),
    ("How do I delete all lines in Vim?", "How do I delete a line in Vim?", "question"),
    ("How do I delete all Docker volumes?", "How do I delete a Docker volume?", "question"),  # past a modifier
    # origins swapped with no "to"
    ("Do I need a plug adapter in the US if I'm from the UK?",
     "Do I need a plug adapter in the UK if I'm from the US?", "direction"),
    ("I'm flying from Canada, do I need a visa for Mexico?", "I'm flying from Mexico, do I need a visa for Canada?",
     "direction"),
    ("The light bulb was invented by whom?", "When was the light bulb invented?", "question"),
    ("light bulb inventor", "When was the light bulb invented?", "question"),
    ("great pyramid construction date", "Why was the Great Pyramid built?", "question"),
    ("What is the population of the City of Westminster?", "What is the population of Westminster?", "terms"),
    ("Who wrote The Little Mermaid?", "Who wrote The Mermaid?", "terms"),
    ("What is Moby-Dick about?", "Who wrote Moby-Dick?", "intent"),
    # what a work says is its topic, which no date or author answers (stop 32: the rules passed these and
    # only the learned veto stood in the way)
    ("What is the main idea of Walden?", "When was Walden written?", "intent"),
    ("What is the theme of Macbeth?", "Who wrote Macbeth?", "intent"),
    ("What was the central message of the Gettysburg Address?", "Where was the Gettysburg Address given?", "intent"),
    # stop 33 (probe AA's wrong hits, read in general; these pairs were written for the test): a keyword query
    # that ends on "<participle> by" asks who; what a thing is made of is no count of its parts; what two
    # things share is not how they differ; a comparison is not working one out from the other
    ("Hamlet written by", "When was Hamlet written?", "question"),
    ("When was the telescope invented?", "telescope invented by", "question"),
    ("What are piano keys made of?", "piano number of keys", "intent"),
    ("What do alligators and crocodiles have in common?", "alligator vs crocodile", "intent"),
    ("similarities between stocks and bonds", "What is the difference between stocks and bonds?", "intent"),
    ("How do I calculate APR from APY?", "apr vs apy", "intent"),
    ("What did Julius Caesar look like?", "Who was Julius Caesar?", "intent"),
    ("What happened to the Romanov family?", "Who were the Romanov family?", "intent"),
    ("How tall is the tallest tree in the world?", "What is the tallest tree in the world?", "intent"),
    ("How do you say goodnight in Italian?", "How do you say hello in Italian?", "terms"),
    ("How do you say thanks in Italian?", "How do you say hello in Italian?", "terms"),
    ("How do I get rid of a migraine?", "What causes migraines?", "intent"),
    ("What should I do if someone is choking?", "Why do people choke?", "intent"),
    ("What helps with hay fever?", "What causes hay fever?", "intent"),
    ("Is a dolphin heavier than a shark?", "Is a shark heavier than a dolphin?", "direction"),
    # two names share a WordNet synset only through a later sense of one ("China" / "Taiwan")
    ("What is the population of Taiwan?", "What is the population of China?", "terms"),
    # a term that starts with a phrasing word
    ("What is a common noun?", "What is a proper noun?", "terms"),
    ("What is the simple past tense?", "What is the past tense?", "terms"),
    # fractions in words are read as their digits: equal values written differently still differ
    ("Simplify 6/8.", "Simplify 3/4.", "numbers"),
    ("What is three quarters as a decimal?", "What is 4/3 as a decimal?", "numbers"),
    ("How many tablespoons are in two thirds of a cup?", "How many tablespoons are in a third of a cup?", "numbers"),
    ("Who won the second season of American Idol?", "american idol season 1 winner", "numbers"),
    ("Why is 1 not a prime number?", "Why is 1 a prime number?", "negation"),
    # a who-question implies a person word only where the other names none
    ("Who was the first woman in space?", "Who was the first man in space?", "light"),
    ("In what language was The Canterbury Tales written?", "Who is the author of The Canterbury Tales?", "light"),
    # an expression's operators, code operators, where a trip starts and ends, a list as a thing
    ("How do you solve for x in 2x - 5 = 15?", "How do you solve for x in 2x + 5 = 15?", "numbers"),
    ("What is the difference between != and !== in JS?", "What is the difference between == and === in JS?", "terms"),
    ("Do I need a visa to travel to the US from Japan?", "Do I need a visa to travel to Japan from the US?",
     "direction"),
    ("How do I convert a string to a list in Python?", "How do I convert a list to a string in Python?", "direction"),
    # an overview is not one fact about the thing; listing is not creating or counting
    ("Explain the Bayeux Tapestry.", "Who made the Bayeux Tapestry?", "intent"),
    ("Tell me about the Beatles.", "Where were the Beatles from?", "intent"),
    ("Explain what mead is.", "How is mead made?", "intent"),
    ("How do I list S3 buckets using the AWS CLI?", "How do I create an S3 bucket using the AWS CLI?", "intent"),
    ("How do I count all running Docker containers?", "How do I list all running Docker containers?", "intent"),
    # a count is not a length or a price; naming things is not counting them; during is not after
    ("How long are the episodes in the first season of Squid Game?", "How many episodes are in season 1 of Squid Game?",
     "intent"),
    ("How long does it take to charge a Tesla at home?", "How much does it cost to charge a Tesla at home?", "intent"),
    ("List the months that have thirty-one days.", "How many months have 31 days?", "intent"),
    ("Who was the US president after the Civil War?", "Who was the US president during the Civil War?", "poles"),
    ("What is the national anthem of France?", "Who wrote the national anthem of France?", "intent"),
    ("Why is the sea salty?", "How salty is the sea?", "intent"),
    ("Where do penguins sleep?", "How do penguins sleep?", "intent"),
    ("What do cats dream about?", "Do cats dream?", "intent"),
    # stop 20, a fresh probe of 92 groups: a version is not a float, a ratio has an order
    ("What's new in Python 3.1?", "What's new in Python 3.10?", "numbers"),
    ("What is the best resolution for a 9:16 YouTube video?", "What is the best resolution for a 16:9 YouTube video?",
     "numbers"),
    # … and what cache/shapes.py reads: order, roles, particles, scope, tense, measures, requests
    ("Are all rectangles squares?", "Are all squares rectangles?", "direction"),
    ("Who is Zeus the father of?", "Who is the father of Zeus?", "direction"),
    ("Which team beat Germany 7-1 in the 2014 World Cup?", "Which team did Germany beat 7-1 in the 2014 World Cup?",
     "direction"),
    ("Who was the Taj Mahal built by?", "For whom was the Taj Mahal built?", "direction"),
    ("Can my employee read my work emails?", "Can my employer read my work emails?", "direction"),
    ("How do I zoom in on a Mac?", "mac zoom out", "direction"),
    ("Can children over 12 fly alone on Delta?", "Can children under 12 fly alone on Delta?", "direction"),
    ("Is English an official language of India?", "Is English the only official language of India?", "question"),
    ("Is it bad to drink coffee?", "Is it bad to drink too much coffee?", "question"),
    ("Was Pluto considered a planet?", "Is Pluto considered a planet?", "question"),
    ("Which planet has the largest moon?", "Which planet has the most moons?", "intent"),
    ("What is the easiest sorting algorithm?", "What is the fastest sorting algorithm?", "intent"),
    ("How do I write a cover letter for a data analyst role?", "Write a cover letter for a data analyst role.", "intent"),
    ("job interview questions", "job interview tips", "intent"),
    ("How do I know if I am in ketosis?", "How do I get into ketosis?", "intent"),
    ("Which password manager is the best?", "What is a password manager?", "intent"),
    ("When did France sell Louisiana?", "Which country did France sell Louisiana to?", "intent"),
    ("Are any snakes venomous?", "Are all snakes venomous?", "poles"),
    ("Who is the mother of Zeus?", "Who is the father of Zeus?", "poles"),
    ("How many days since Christmas?", "How many days until Christmas?", "poles"),
    ("mexico population", "mexico city population", "terms"),
    ("How many penguins are there?", "How many species of penguins are there?", "terms"),
    ("How much does a dog cost?", "How much does a dog cost per year?", "terms"),
    ("How many bar are in one psi?", "Convert 1 bar to psi.", "direction"),
    ("Which is wider, 16:9 or 9:16?", "Which is wider, 9:16 or 16 to 9?", "numbers"),  # refused both ways round
    ("How do I merge my feature branch into main?", "How do I merge main into my feature branch?", "direction"),
    # stop 21: the near-misses the guard still served in both probes
    ("What time did the Titanic go down?", "What year did the Titanic go down?", "question"),
    ("What date did the Berlin Wall fall?", "Which year did they tear down the Berlin Wall?", "question"),
    ("In what city did delegates sign the Declaration of Independence?",
     "On what date did most delegates sign the Declaration of Independence?", "question"),
    ("How long is the longest river in Europe?", "What's the longest river in Europe?", "intent"),
    ("What is d/dx (1/x)?", "What is ∫(1/x) dx?", "terms"),
    ("I'm a Canadian citizen living in the US. Do I still need to file Canadian taxes?",
     "I'm a US citizen living in Canada. Do I still need to file US taxes?", "direction"),
    ("I'm a US citizen living in Canada. Do I still need to file state taxes?",
     "I'm a US citizen living in Canada. Do I still need to file US taxes?", "light"),
    ("Are all odd numbers prime?", "Is every prime number odd?", "direction"),
    ("Can I pay my taxes with Bitcoin?", "Do I have to pay taxes on Bitcoin?", "question"),
    # stop 21, probe C (written against the guard above): quantities, symbols, repetition, opposite verbs,
    # WordNet merges, tense and modality in any question, a class word before a name, passive roles
    ("Can some birds fly?", "Can all birds fly?", "question"),
    ("Why does my baby sleep so little?", "Why does my baby sleep so much?", "question"),
    ("Is it healthy to eat a few eggs?", "Is eating lots of eggs healthy?", "question"),
    ("What does $# mean in bash?", "bash $? meaning", "terms"),
    ("What does ** mean before a parameter in Python?", "What does * mean before a parameter in Python?", "terms"),
    ("Can I donate blood again?", "Can I donate blood?", "terms"),
    ("How do I hide files on a Mac?", "mac show hidden files", "poles"),
    ("Who is the president of Microsoft?", "Who is the chairman of Microsoft?", "terms"),
    ("Are toads poisonous to dogs?", "Are frogs poisonous to dogs?", "terms"),
    ("When does daylight saving time start in the United States?",
     "When did daylight saving time start in the United States?", "question"),
    ("Who will win the Super Bowl?", "Which team won the Super Bowl?", "question"),
    ("Should I file taxes as a student?", "Do I have to file taxes as a student?", "question"),
    ("What is the capital of the country Georgia?", "What is the capital of Georgia?", "terms"),
    ("Which company was acquired by GitHub?", "Which company acquired GitHub?", "direction"),
    ("Who did Beethoven teach?", "Who was Beethoven taught by?", "direction"),
    ("Is depression caused by insomnia?", "Does depression cause insomnia?", "direction"),
    ("insomnia causing depression", "Does depression cause insomnia?", "direction"),
    ("Are humans eaten by sharks?", "Do humans eat sharks?", "direction"),
    ("Do sharks ever eat humans?", "Do humans eat sharks?", "direction"),
    ("Can my cat eat dog food?", "Can dogs eat cat food?", "direction"),
    # stop 22: "Can you <verb> …" with a verb that asks nothing of the assistant is a yes/no question
    ("How long can you keep cooked rice in the fridge?", "Can you keep cooked rice in the fridge?", "intent"),
    ("Where can you see puffins in Iceland?", "Can you see puffins in Iceland?", "intent"),
    # stop 22: the asker done to, not doing
    ("What should my husband buy me for our anniversary?", "What should I buy my husband for our anniversary?",
     "direction"),
    ("Can my neighbor sue me over a fallen tree?", "Can I sue my neighbor over a fallen tree?", "direction"),
    # stop 22, probe E: a quoted text is taken literally unless its meaning is asked; "side effects" is a compound
    ('Translate "I lost my keys" into Italian.', 'Translate "I lost my key" into Italian.', "quoted"),
    ('What rhymes with "singing"?', 'What rhymes with "sing"?', "quoted"),
    ("How effective is the flu shot?", "What are the side effects of the flu shot?", "terms"),
    # stop 23, probe F's kinds, each in other words: an abbreviation is no plural ("https" is not "http"s); a
    # situation set out before the question keeps its order; "Can <someone> …" asks what may be done; a
    # variable operand keeps its place; "how did" asks what happened, not when; converting is no comparison
    ("Is HTTPS blocked on port 80?", "Is HTTP blocked on port 80?", "terms"),
    ("My printer prints but my scanner won't scan. What should I try?",
     "My scanner scans but my printer won't print. What should I try?", "negation"),  # the negation moved
    ("Can my landlord enter my apartment?", "Does my landlord have to give notice before entering my apartment?",
     "question"),
    ("What is the integral of 3^x?", "What is the integral of x^3?", "numbers"),
    ("How did the Cold War end?", "What year did the Cold War end?", "intent"),
    ("How do I switch from a checking account to a savings account?", "checking vs savings account", "intent"),
    ("What is The Old Man and the Sea about?", "old man and the sea author", "intent"),  # who, by its noun alone
    # stop 23, probe G's kinds in other words: valence suffixes, a function's argument, an operator before a
    # function, a length asked for, "just that", a swap across "but", near-synonyms compared
    ("What is the formula of nitrous oxide?", "What is the formula of nitric oxide?", "terms"),
    ("integral of cos(2x)", "integral of cos(x)", "numbers"),
    ("simplify x^3 / tan(x)", "simplify x^3 * tan(x)", "numbers"),
    ("Explain inflation in one sentence.", "Explain inflation.", "form"),
    ("My package arrived damaged. Can I get a refund for just that package?",
     "My package arrived damaged. Can I get a refund?", "question"),
    ("My left speaker crackles but the right one is fine. What should I check first?",
     "My right speaker crackles but the left one is fine. What should I check first?", "direction"),
    ("My kitchen lights flicker but the bedroom lamp is fine. What could cause them to flicker?",
     "My bedroom lamp flickers but the kitchen lights are fine. What could cause it to flicker?", "direction"),
    ("What's the difference between revenue and profit?", "What's the difference between gross and net profit?",
     "terms"),
    ("What key is the relative minor of E major?", "What key is the relative major of E minor?", "poles"),
    # probe H's kinds in other words: code is taken literally; rounding up is not rounding
    ("What does `len(set(x))` return in Python?", "What does `len(x)` return in Python?", "quoted"),
    ("google sheets round down to a whole number", "google sheets round to a whole number", "terms"),
    ("W-2 vs W-4", "W-2 vs W-9", "terms"),
    ("How tall is the tallest building in Dubai?", "tallest building in dubai", "intent"),  # measured vs named
    # probe I's kinds in other words: what a percentage question asks for; names against a number
    ("60 is 25% of what number?", "What is 25% of 60?", "numbers"),
    ("price of a $60 jacket with 25% off", "What is 25% of $60?", "numbers"),
    ("What are the names of the Great Lakes?", "number of great lakes", "intent"),
    # stop 23, probe D's leftovers: an operator inside code; a range runs one way
    ("What does `m // n` return in Python?", "What does `m / n` return in Python?", "quoted"),  # code, literally
    ("what does m // n return in python", "What does `m / n` return in Python?", "terms"),  # "/" read in code
    ("How do I print the numbers from 100 down to 1 in Bash?", "How do I print the numbers from 1 to 100 in Bash?",
     "numbers"),
    # stop 24: chat spellings keep what they say — a contraction typed without its apostrophe negates,
    # "10k" is a number, "-u" is an option and not "you", "were" is not "we're"
    ("why doesnt my phone charge", "Why does my phone charge so slowly?", "negation"),
    ("calories burned walking 5k steps", "How many calories does walking 10,000 steps burn?", "numbers"),
    ("What does git stash -u do?", "What does git stash do?", "terms"),
    ("Where were the Olympics held?", "Where are the Olympics going to be held?", "question"),
    ("What is 9:15 pm in 24-hour time?", "9.45pm in 24 hour clock", "numbers"),
    # probe K: an arrow is "to"; Rust's "&str" is its own type; "list" is a thing on either side of "to"
    ("how to convert fahrenheit to celsius", "celsius → fahrenheit conversion, how to calculate", "direction"),
    ("Rust: how to convert a &str to a String", "Rust: how to convert a String to &str", "direction"),
    ("java list to array of strings", "Java: how to convert a String[] array to a List<String>", "direction"),
    # probe L: "from April 2024" is since then, the opposite of before
    ("At what income did the High Income Child Benefit Charge start before April 2024?",
     "At what income does the High Income Child Benefit Charge start from April 2024?", "poles"),
    ("90 days from jan 15 2024", "What date is 90 days before January 15, 2024?", "poles"),
    # what comes after what ("breastfeeding" and "breastfeed" stem apart: matched as the terms check does)
    ("how long should I wait to have a drink after breastfeeding",
     "how long should I wait to breastfeed after one drink", "direction"),
    # stop 25: what a sentence says it tells is its meaning, not how to compute it; "bike" is no motorcycle;
    # "the number of questions" counts, "how long" measures; a judged level is a norm, what to do a how-to
    ("What does standard deviation tell you?", "How do you calculate standard deviation?", "intent"),
    ("motorcycle chain lube how to", "bike chain lube how to", "terms"),
    ("How long is the SAT math section?", "number of questions sat math section", "intent"),
    ("what blood sugar level is considered low", "what to do for low blood sugar", "intent"),
    ("What is considered a good credit score?", "How does a credit score get calculated?", "intent"),
    # a time of day, an hour and a half, a day: each one reading, so a different one differs
    ("cron every weekday at 9pm", "What cron line runs a job at 9 AM every weekday?", "numbers"),
    ("What time is 21:45 in 12-hour format?", "What time is 21:00 in 12-hour format?", "numbers"),
    ("How many hours is 9pm to 5pm?", "hours between 9am and 5pm", "numbers"),
    # where a time is told is its origin: the other place is where it is asked for
    ("If it's 9am in London, what time is it in New York?", "If it's 9 am in New York, what time is it in London?",
     "direction"),
    ("What is 3pm GMT in EST?", "3 pm EST to GMT", "direction"),
    ("What time is it in London when it's 9am in Tokyo?", "convert 9:00 London to Tokyo time", "direction"),
    # a minus sign makes a number negative; the same thing counted with other numbers; arriving is not leaving
    ("Convert -100°F to Celsius", "100°F to °C", "terms"),
    ("What is 2 to the power of -10?", "What is 2 to the power of 10?", "terms"),
    ("A recipe serves 6 and needs 300g of pasta. How much pasta for 4 people?",
     "A recipe serves 4 and needs 300g of pasta. How much pasta for 6 people?", "numbers"),
    ("When does the last train to Boston leave?", "When does the last train to Boston arrive?", "poles"),
    # probe O: the sentence that asks, after full sentences of context, says what is asked; a total is the sum
    ("Settling a bet with my brother. How tall is the tallest mountain in the world?",
     "Settling a bet with my brother. What's the tallest mountain in the world?", "intent"),
    ("What's my total on a $64 restaurant bill with an 18% tip?", "How much should I tip on a $64 restaurant bill at 18%?",
     "numbers"),
    ("cron every weekday at 10am", "cron expression for 9:00 monday to friday", "numbers"),
    ("Is overtime paid at 2.5 times the regular rate?", "Is overtime paid at one and a half times the regular rate?",
     "numbers"),
    ("how much paracetamol can an adult take in 48 hours", "max paracetamol per day for an adult", "numbers"),
    # the asker's context is forgiven only when the question does not point back into it, and only the
    # words that say who asks and why: a condition (pregnant), an age or a drug stays
    ("My son has a fever. Can I give him aspirin?", "Can I give aspirin for a fever?", "terms"),
    ("I'm pregnant. What is the safe daily dose of caffeine?", "What is the safe daily dose of caffeine?", "terms"),
    ("When did Mozart die?", "How old was Mozart when he died?", "terms"),  # a date and an age, in the past
    # stop 26: a swap names its sides by number too; a keyword query's place before its time; noon is a
    # time; a people and a place that trade roles; the state of New York is not the city
    ("can i replace a 3 prong outlet with a 2 prong outlet", "can i replace a 2 prong outlet with a 3 prong outlet",
     "direction"),
    ("If it's 9am in London, what time is it in New York?", "NYC 9am to London time", "direction"),
    ("What time is it in New York when it's noon in Tokyo?", "noon nyc what time in tokyo", "direction"),
    ("What time is it at noon in Tokyo?", "What time is it at midnight in Tokyo?", "numbers"),
    ("Can Americans live in Canada?", "Can a Canadian citizen live in the US?", "direction"),
    ("Can I use a UK hair dryer in the US?", "using an american hairdryer in britain ok?", "direction"),
    ("What is the population of New York state?", "What is the population of NYC?", "terms"),
    ("What is 3/4 plus 2/3?", "What is 3/4 minus 2/3?", "numbers"),
    ("convert 5km to miles", "convert 5m to miles", "terms"),
    ("Who invented the personal computer?", "Who is credited with inventing the computer?", "terms"),
    ("Is the museum free on Sundays?", "Is the museum open on Sundays?", "terms"),  # no museum-free
    # probe Q: what happens if asks a consequence; a country as an adjective ("in US elections") is no place,
    # and a people's language names its country; a country is a name however typed; a discount in words
    ("what happens if my ryanair carry-on is over the weight limit", "What is the carry-on weight limit for Ryanair?",
     "intent"),
    ("What would happen if Yellowstone erupted?", "Will Yellowstone erupt?", "intent"),
    ("Can a US citizen living in Canada vote in US elections?", "Can a Canadian living in the US vote in US elections?",
     "direction"),
    ("Can I drive in the US with a German driver's license?", "Can I drive in Germany with a US driver's license?",
     "direction"),
    ("can canadians residing in the united states vote in american elections",
     "Can a Canadian living in the US still vote in Canadian elections?", "direction"),
    ("$85 minus 20%", "20% tip on $85", "terms"),
    ("Can cats eat dog food?", "Is cat food safe for dogs?", "direction"),
    # probe R: "X … to replace Y" names the new thing first; what both sides of a swap name is neither side
    ("How much baking soda do I use to replace 1 teaspoon of baking powder?",
     "substitute baking powder for 1 tsp baking soda, how much", "direction"),
    ("Why is my dog drinking so much water?", "dog daily water intake", "terms"),  # no amount asked
    ("Is it okay if my cat eats dog food?", "Can dogs eat cat food?", "direction"),
    ("convert 9 AM Eastern Standard Time to London time", "convert 9 AM Pacific Standard Time to London time",
     "direction"),
    ("How do I undo my last Git commit without losing my changes?", "How do I undo my last Git commit and lose my changes?",
     "terms"),
    # probe S (stop 27): a point's coordinates in order; words the stemmer had folded into others
    ("What is the slope of the line through (3, 2) and (11, 6)?",
     "What is the slope of the line through (2, 3) and (6, 11)?", "numbers"),
    ("What is the converse of the Pythagorean theorem?", "What is the Pythagorean theorem?", "terms"),
    ("How long is the GRE?", "gre calculator allowed?", "intent"),  # (a keyword ending "allowed" asks whether)
    ("Is the standard deduction better than itemizing for a single filer in 2024?",
     "What's the standard deduction for a single filer in 2024?", "terms"),
    ("What is the derivative of 2 to the x?", "What is the derivative of x squared?", "numbers"),
    ("What number squared equals 2?", "What's 2 squared?", "numbers"),
    ("Why does my nose keep bleeding?", "nose bleeding what to do", "intent"),
    ("How do I count distinct values in a column in SQL?",
     "How do I count how many times each distinct value appears in a column in SQL?", "terms"),
    ("Tell me how regularly a bike chain needs lubricating.", "What should I lube my bike chain with?", "terms"),
    ("What is each interior angle of a regular hexagon?", "Tell me the total of all interior angles in a hexagon.",
     "terms"),
    ("golden rule meaning", "What is the golden mean?", "terms"),
    ("What is rule utilitarianism?", "utilitarianism definition", "terms"),
    ("how to calculate my marks from the percentage", "marks percentage formula", "terms"),
    ("Does rental car insurance cover my own car?", "will my auto policy cover a rental vehicle", "terms"),
    ("We're signing a one-way NDA with a supplier. They'll be sharing their pricing data with us. Which party "
     "discloses?", "We're signing a one-way NDA with a supplier. We'll be sharing our pricing data with them. "
     "Which party discloses?", "direction"),
    ("If it's 9am in London, what time is it in New York?",
     "My daughter is studying in London and I'm in New York — what time is it there when it's 9am here?",
     "direction"),
    ("Compare Python and Go in a table.", "Compare Python and Go.", "form"),
    ("Make me a quiz on the French Revolution.", "French Revolution causes", "form"),
    ("What time did the Titanic go down?", "year the titanic went down", "question"),
    ("Is it safe for my dog to eat grass?", "dog eating grass reason", "intent"),  # a keyword's last word asks
    ("What are the names of the strings on a standard guitar?", "standard guitar string count", "intent"),
    ("How long do hares live?", "rabbit lifespan", "terms"),  # WordNet's shared sense is not the animal
    ("Who wrote the song Respect?", "Who performed Respect?", "terms"),
    ("How do I install Docker Compose on Ubuntu?", "How do I install Docker on Ubuntu?", "terms"),
    ("I just watched the first Alien movie. Who directed it?", "Who directed the Alien movie?", "numbers"),
    ("I'm learning guitar and a song uses a capo on the 4th fret with G chord shapes. What key is the song in?",
     "I'm learning guitar and a song uses a capo on the 2nd fret with G chord shapes. What key is the song in?",
     "numbers"),
    ("What's the difference between one die and two dice?", "What's the difference between one die and three "
     "dice?", "numbers"),
    ("Where do golden retrievers live?", "golden retriever lifespan", "terms"),
    ("Recommend a good book for learning calculus.", "Recommend a good book for learning statistics.", "terms"),
    ("What is a Linux namespace?", "k8s namespace explained", "terms"),  # a field on each side is a swap
    ("What were the causes of the American Revolution?", "What were the economic causes of the American Revolution?",
     "terms"),  # an adjective, not a field label
    ("Give me 3 riddles for kids.", "Give me 3 math riddles for kids.", "terms"),
    ("What causes inflation?", "inflation meaning economics", "intent"),
    ("How do I calculate comparative advantage?", "comparative advantage economics", "intent"),
    ("How do you calculate a p-value?", "Explain what a p-value means in statistics.", "intent"),
    ("How do you calculate standard deviation?", "What is standard deviation used for in statistics?", "intent"),
    ("What is cream of tartar made from?", "What is cream of tartar used for?", "intent"),
    ("What is the difference between velocity and acceleration?", "How does velocity differ from speed?", "terms"),
    ("What is a catalytic converter?", "Define catalyst in chemistry.", "terms"),
    ("What is a t-score?", "What does a standard score mean in statistics?", "terms"),
    ("What is a pointer to a pointer in C?", "Tell me what pointers are in C programming.", "terms"),
    ("What is the formula for work in physics?", "Give me the equation for the rate of doing work.", "terms"),
    ("What is an oxidation number?", "Explain what oxidation means in chemistry.", "terms"),
    ("How does += work in Python?", "What does -= do in Python?", "terms"),  # code operators are terms
    ("how long does diphenhydramine take to work in adults", "how much Benadryl does an adult take", "terms"),
    ("What is the best password manager?", "How does a password manager work?", "terms"),
    ("Explain what a good credit score is.", "Explain how credit scores work.", "intent"),
    ("How many minutes are in a week?", "A week has how many hours?", "terms"),  # a unit against another unit
    ("How far is it to fly from London to New York?", "How long does it take to fly from London to New York?",
     "terms"),
    ("How long should I grill salmon?", "How many minutes do I broil salmon for?", "terms"),
    ("how long should an adult nap during the day", "how many hours of sleep does an adult need", "terms"),
    ("Which languages do people speak in Switzerland?", "main language of switzerland", "terms"),
    ("How long does it take to run a mile?", "How much energy do I use jogging a mile?", "terms"),
    ("How do I count how many times each distinct value appears in a column in SQL?",
     "How do I count distinct values in a column in SQL?", "terms"),
    ("How much is a fishing license in California?", "california fishing license required", "intent"),
    ("How long did it take to film the movie Titanic?", "How long is the movie Titanic?", "terms"),
    ("Which painters are considered Post-Impressionists?", "impressionism vs post impressionism", "terms"),
    ("How can I use Parkinson's Law to get more done?", "What is Parkinson's Law?", "intent"),
    ("I'm a US citizen living in Canada. Do I still need to file state taxes?",
     "US citizen living in Canada: do I still file US tax returns?", "light"),
    # probe V's wrong pairs, read in general
    ("How do you calculate opportunity cost?", "What is opportunity cost?", "intent"),
    ("How do I calculate BMI?", "What is BMI?", "intent"),
    ('In which book did Descartes write "I think, therefore I am"?',
     'What did Descartes mean by "I think, therefore I am"?', "intent"),
    ("What fruits are safe for parakeets?", "parakeet toxic fruits", "poles"),
    ("Which foods are dangerous for dogs?", "Which foods are safe for dogs?", "poles"),
    ("When is the best time to ask for a raise?", "tips raise request", "intent"),  # "tips" asks how
    ("What should I lube my bike chain with?", "When should I oil my bicycle chain?", "intent"),  # a thing, not when
    ("for n in range(10)", "for and in range(10)", "terms"),  # "n" is a variable here, not "and"
    ("r vs python", "are vs python", "terms"),  # the R language
    ("Can I pay my taxes with Bitcoin?", "Is Bitcoin taxable?", "terms"),  # paying with it, not a tax on it
    ("How do I calculate the price before sales tax from a total?", "sales tax calculation", "terms"),
    ("100 us dollars in canadian dollars", "How many US dollars is 100 Canadian dollars?", "direction"),
    ("Do I have to pay tax on gifts under $18,000?", "gift tax over 18000 dollars", "direction"),
    ("What does the word pomodoro mean in English?", "pomodoro technique explained", "terms"),  # a word's English
    ("What was the English Reformation?", "What was the Reformation?", "terms"),
    ("What credit score do I need to get the best mortgage rate?", "minimum credit score for a mortgage", "terms"),
    ("how much is 3 items at $10 each", "what does each cost when it's 3 for ten bucks", "terms"),  # a sum
    ("Is it okay to take ibuprofen?", "ibuprofen every day safe?", "terms"),
    ("Which president was the youngest?", "youngest us president", "terms"),  # a president of which country?
    ("How do I sort a list of dictionaries by two keys in Python?",
     "how to order a python list of dictionaries by one of the keys", "numbers"),
    ("How do I merge three dictionaries in Python?", "python merge dicts", "numbers"),
    ("What is the largest city in Canada by area?", "What is the largest city in Canada?", "terms"),
    ("How do I remove duplicates from a column in Excel using a formula?",
     "How do I remove duplicates from a column in Excel?", "terms"),  # a formula is a method here
    ("How do I lower my blood pressure with medication?", "How do I lower my blood pressure naturally?", "terms"),
    ("docker remove all running containers", "Docker command to clean up all containers that aren't running", "terms"),
    ("How do I list just the running containers in Docker?", "How do I list the containers in Docker?", "question"),
    ("kafka topic vs partition", "How many partitions should a Kafka topic have?", "intent"),  # probe W, rotated
    ("How many penguins are there?", "How many different kinds of penguins are there?", "terms"),  # kinds counted
    # probe X: what each owns, and which word a negation stands before, traded between the same words
    ("Who pays when my tree falls on my neighbor's house during a storm?",
     "Who pays when my neighbor's tree falls on my house during a storm?", "direction"),
    ("Can my dog eat my cat's food?", "Can my cat eat my dog's food?", "direction"),
    ("Why can you sometimes hear thunder but not see lightning?", "why can i see lightning but hear no thunder",
     "negation"),
    ("How long did it take to film the movie Titanic?", "How long is the movie Titanic?", "terms"),  # its length
    ("How long does a thawed turkey last in the fridge?", "turkey thawing time refrigerator", "terms"),
    ("How long can a cheetah keep running at top speed?", "cheetah top speed", "terms"),  # how long it goes on
    ("Do I need a visa to travel to the US from Japan?", "japan visa for us citizens", "terms"),  # an origin
    # probe Y, rotated: since which version asks when, not why; a keyword query's "who" before what someone does
    ('Since which pip version does pip show the "externally-managed-environment" error?',
     "pip error externally-managed-environment cause", "question"),
    ("How do I register for Self Assessment in the UK?", "uk self assessment who needs to file", "intent"),
    # stop 31: how long against a text that names no time (probe Z, rotated; train); the words to say in another
    # language, inflected otherwise (probe Z); time words and "new" in a context sentence stay terms; a steak rested
    # before cooking; a book first published in English
    ("How long does it take to get rid of fungus gnats in houseplant soil?", "fungus gnats houseplant soil get rid of",
     "intent"),
    ("How long should a business plan be?", "writing a business plan", "intent"),
    ("how do you say i missed you in spanish", 'How do you say "I miss you" in Spanish?', "quoted"),
    ("My passport expired 4 months ago. Can I still travel to Mexico as a US citizen?",
     "My passport expires in 4 months. Can I still travel to Mexico as a US citizen?", "terms"),
    ("I woke up at 3 a.m. last night and couldn't fall back asleep. What can I do about it?",
     "I wake up at 3 a.m. almost every night and can't fall back asleep. What can I do about it?", "terms"),
    ("I bought a new car three weeks ago and it's already been in the shop twice for the same transmission problem. "
     "Does the lemon law apply to me?", "I bought a used car three weeks ago and it's already been in the shop twice "
     "for the same transmission problem. Does the lemon law apply to me?", "terms"),
    ("How long should you rest a steak before cooking?", "steak resting time", "terms"),
    ("When was Don Quixote first published in English?", "When was Don Quixote published?", "terms"),
    # what the asker does not know is set aside before the negations are counted, so the question's own counts
    ("I don't know why. Why can't I log in?", "Why can I log in?", "negation"),
]
SERVED = [
    ("Can you freeze bread?", "Is it ok to freeze bread?"),  # the generic "you" asks yes or no, as "Is it ok"
    ("Can you explain how vaccines work?", "How do vaccines work?"),  # a request: read after "Can you explain"
    # the asker's role kept: a passive with "by", the asker finding out, "for me"
    ("Can my boss fire me for being late?", "Can I be fired by my boss for being late?"),
    ("How do I know if I've been blocked on Instagram?", "How can I tell if someone blocked me on Instagram?"),
    ("Is it possible for me to get a passport in a week?", "Can I get a passport in a week?"),
    ('What does "break the ice" mean?', 'What is the meaning of "breaking the ice"?'),  # its meaning, not its form
    ('How do you say "good morning" in Korean?', 'Translate "goodmorning" into Korean.'),
    ("flu shot side effects", "What are the side effects of the flu shot?"),
    # stop 33: the new readings leave their paraphrases alone
    ("Who invented the telescope?", "telescope invented by"),
    ("What's the difference between an alligator and a crocodile?", "alligator vs crocodile"),
    ("Can I run two Zoom meetings at the same time?", "Is it possible to run two Zoom meetings at the same time?"),
    # stop 23: the same readings on both sides
    ("My printer prints but my scanner won't scan. What should I try?",
     "My printer prints, but my scanner won't scan. What should I try?"),
    ("Can my landlord enter my apartment without notice?", "Is my landlord allowed to enter my apartment without notice?"),
    ("What is the derivative of x^3?", "d/dx of x^3"),
    ("Is it better to lease or buy a car?", "leasing vs buying a car"),  # "better to lease" moves nothing
    ("What does HTTPS stand for?", "https full form"),
    ("What does `x / y` do in JavaScript?", "javascript `x / y` meaning"),
    ("bash print numbers 1 to 100", "How do I print the numbers from 1 to 100 in Bash?"),
    ("old man and the sea author", "Who wrote The Old Man and the Sea?"),
    ("What is the formula of sulphuric acid?", "sulfuric acid formula"),
    ("derivative of x^3 tan x", "What is the derivative of x^3 * tan(x)?"),  # a product written without "*"
    ("Summarize the French Revolution in one sentence.", "Give me a one-sentence summary of the French Revolution."),
    ("Is it better to buy or rent a house?", "buying vs renting a house"),
    ("Should I import or export the settings first?", "Should I export or import the settings first?"),
    ("What is E major's relative minor?", "What is the relative minor of E major?"),  # a possessive reorders
    ("What does `typeof null` return in JavaScript?", "what does javascript `typeof  null` return"),
    ("How do I round up to the nearest 10 in Excel?", "excel round up to nearest 10"),
    # numbers as written in forms, plans and code: "W-2" = "w2", "401(k)" = "401k", "range(0,20,5)" holds three
    # numbers (not 2,005), "twice" is two, "at first" no ordinal
    ("What's the difference between a W-2 and a 1099?", "w2 vs 1099"),
    ("401(k) contribution limit 2025", "2025 401k contribution limit"),
    ("python range(0,20,5) output", "What does range(0, 20, 5) output in Python?"),
    ("How likely is it to get heads twice in 3 coin flips?", "How likely is it to get 2 heads in 3 coin flips?"),
    ("Why does my phone charge slower than at first?", "Why does my phone charge slower than at the start?"),
    # the same words: peak = summit = mountain, pulse = heart rate, rich in = high in, far away = far
    ("highest peak in the Alps", "What is the tallest mountain in the Alps?"),
    ("normal pulse for a 10 year old", "normal heart rate for a 10 year old"),
    ("foods rich in iron", "Which foods are high in iron?"),
    ("How far away is Mars from the Sun?", "How far is Mars from the Sun?"),
    ("tallest building in dubai height", "How tall is the tallest building in Dubai?"),  # a keyword measure
    ("What is 25% of 60?", "25 percent of 60"),
    ("names of the great lakes", "What are the names of the Great Lakes?"),
    # what cache/shapes.py leaves alone: a possessive reorders, "or"/"and" is symmetric, a rate in words
    # matches one in digits, "when" matches any date, the particle is the same
    ("Who is the NBA's greatest player?", "Who is the greatest player in the NBA?"),
    ("Is it better to rent or buy a house?", "Is it better to buy or rent a house?"),
    ("How much water should I drink per day?", "How much water should I drink daily?"),
    ("When did the Berlin Wall fall?", "What year did the Berlin Wall fall?"),
    ("How do I zoom in on a Mac?", "zoom in mac"),
    ("Write a cover letter for a data analyst role.", "Can you write me a cover letter for a data analyst role?"),
    ("Is the Amazon River longer than the Nile?", "Is the Amazon longer than the Nile River?"),  # a name's class word
    ("Who is the current CEO of Microsoft?", "who is ceo of microsoft now"),  # an adverb goes anywhere
    ("What's the docker command to see only the containers that are currently running?",
     "docker list only running containers"),  # "only" on both sides
    # a review's paraphrases of the first version of those checks: "only" moved, a phrase or an adverb
    # moved, the perfect for the past, "what date" for "when", amounts that are no versions, "a day"
    # that is no rate, an adjective before "city", "at all", clean up = clean out
    ("Is Squid Game only available in Korea?", "Is Squid Game available only in Korea?"),
    ("Is it legal to own a gun in Japan?", "Is it legal in Japan to own a gun?"),
    ("How do I remove a stripped screw easily?", "How do I easily remove a stripped screw?"),
    ("Has Queen Elizabeth died?", "Did Queen Elizabeth die?"),
    ("What date is Easter this year?", "When is Easter this year?"),
    ("How much is $1.50 in euros?", "How much is $1.5 in euros?"),
    ("Is a 3.0 GPA good?", "Is a 3 GPA good?"),
    ("Is a day on Mars longer than a day on Earth?", "Is a Martian day longer than an Earth day?"),
    ("Is Chicago a walkable city?", "Is Chicago walkable?"),
    ("Do cats need any vaccines?", "Do cats need vaccines at all?"),
    ("How do I clean up my Mac's storage?", "How do I clean out my Mac's storage?"),
    ("What are all the planets in the solar system?", "What are the planets of the solar system?"),  # both all
    ("How do I read a file line by line in Java?", "Show me how to read every line of a file using Java."),
    ("How do I close all tabs?", "How do I close every tab?"),  # "every tab" is all of them too
    ("What's the quickest way to stop a nosebleed?", "Fastest way to make a nosebleed stop?"),  # one manner
    ("Can I use vegetable oil instead of olive oil in brownies?",
     "Can I replace olive oil with vegetable oil in brownies?"),  # the same swap, worded the other way
    ("How is jelly different from jam?", "Explain what separates jam from jelly."),  # a contrast names no origin
    ("Which city is Australia's capital?", "What is the capital of Australia?"),
    ("10 miles in km?", "Convert 10 miles to kilometers."),
    ("How many kilometers are in 10 miles?", "Convert 10 miles to kilometers."),
    ("Calculate fifteen percent of 80.", "What is 15% of 80?"),
    ("ww2 ended in which year", "What year did World War II end?"),
    ("When did the Second World War end?", "What year did World War II end?"),
    ("How many people live in Canada?", "What is the population of Canada?"),
    ("At what temperature in Fahrenheit does water boil?", "What is the boiling point of water in Fahrenheit?"),
    ("How can I disable notifications on Android?", "How do I turn off notifications on Android?"),
    ("what's the colour of the sky", "What is the color of the sky?"),
    ("What is the reason cats purr?", "Why do cats purr?"),
    ("Why do earthquakes happen?", "How do earthquakes happen?"),
    ("Could you explain recursion?", "Explain recursion."),
    ("What's the way to reverse a Python list?", "How do I reverse a list in Python?"),
    ("How do I remove a Docker volume?", "docker delete volume"),
    ("How tall is the Eiffel Tower?", "What is the height of the Eiffel Tower?"),
    ("how to restart a k8s deployment", "How do I restart a Kubernetes deployment?"),
    ("python dict comprehension", "How do I write a dictionary comprehension in Python?"),
    ("How often should I water a cactus?", "cactus watering frequency"),
    ("Is the café open on Sundays?", "Is the cafe open on Sundays?"),
    ("What does a koala eat?", "What do koalas eat?"),
    ("Who invented the telephone?", "Who was the inventor of the telephone?"),
    ("ocean poem", "Write a poem about the ocean."),
    ("great gatsby plot summary", "Summarize the plot of The Great Gatsby."),
    ("Who wrote the poem \"The Road Not Taken\"?", "Who wrote The Road Not Taken?"),
    ("recursion example explained", "Explain recursion with an example."),
    ("Explain entropy in simple terms.", "What is entropy?"),
    ("What are common nouns?", "common noun definition"),
    ("define osmosis", "What is osmosis?"),
    ("What causes hiccups?", "Why do we get hiccups?"),
    ("Which planets have rings?", "planets with rings"),
    ("How many planets have rings?", "number of planets with rings"),
    ("What is 5/8 as a decimal?", "5/8 in decimal"),
    ("acres in a hectare", "How many acres are in a hectare?"),
    ("gb to mb", "How many megabytes are in a gigabyte?"),
    ("What is the capital city of France?", "What is the capital of France?"),
    ("light bulb inventor", "Who invented the light bulb?"),
    ("great pyramid construction date", "When was the Great Pyramid built?"),
    ("satoshis per btc", "How many satoshis are in a bitcoin?"),
    ("How much is the minimum wage in Oregon?", "What is the minimum wage in Oregon?"),
    ("hello in italian", "How do you say hello in Italian?"),
    ("What do you get when you multiply seven and eight?", "Multiply 7 by 8."),
    ("tbsp in 1/4 cup", "How many tablespoons are in a quarter cup?"),
    ("What decimal equals one-third?", "What is 1/3 as a decimal?"),
    ("Who won the first season of American Idol?", "american idol season 1 winner"),
    ("Who is the author of Nineteen Eighty-Four?", "Who wrote 1984?"),
    ("billion how many zeroes", "How many zeros are in a billion?"),
    ("97 prime or not?", "Is 97 a prime number?"),
    ("gelato vs ice cream", "Explain what makes gelato not the same as ice cream."),
    ("Explain what separates a virus from a bacterium.", "How do viruses differ from bacteria?"),
    ("days in thirty years", "How many days are in 30 years?"),
    ("When should I do my stretches, before a run or afterwards?", "Should I stretch before or after running?"),
    ("chicago timezone", "What time zone is Chicago in?"),
    ("How many squares are on a chessboard?", "How many squares does a chess board have?"),
    ("Who wrote the Harry Potter books?", "Who is the author of Harry Potter?"),
    ("What is the 50/30/20 budgeting rule?", "Explain the 50-30-20 rule for budgeting."),
    ("factor x^2-9", "Factorise x² − 9."),
    ("Tell me about Napoleon Bonaparte.", "Who was Napoleon Bonaparte?"),
    ("Can you explain who Napoleon was?", "Tell me about Napoleon Bonaparte."),
    ("Explain what recursion is.", "What is recursion?"),
    ("How long is War and Peace in pages?", "How many pages is War and Peace?"),
    ("How many fluid ounces does one cup hold?", "How many ounces in a cup?"),
    ("How long does the flu last?", "How many days does influenza last?"),
    ("What is the name of the first man on the moon?", "Who was the first man on the moon?"),
    ("Where can I buy a train ticket in Germany?", "How do I buy a train ticket in Germany?"),
    # stop 21: what the new readings leave alone
    ("What is the derivative of sin(x)?", "d/dx sin(x)"),
    ("When did the Berlin Wall fall?", "What year did the Berlin Wall fall?"),
    ("Who won the FIFA World Cup in 2018?", "Which country won the 2018 FIFA World Cup?"),
    ("What vaccines do I need to travel to Kenya?", "Can you tell me what immunizations I need for a trip to Kenya?"),
    ("How do you say \"I love you\" in Japanese?", "Give me the Japanese words for \"I love you\"."),
    ("Do all mammals give birth to live young?", "Does every mammal give birth to live young?"),
    ("Who was taught by Beethoven?", "Who did Beethoven teach?"),
    ("Do sharks eat humans?", "Are humans eaten by sharks?"),
    ("Give me a few tips for better sleep.", "Give me some tips for better sleep."),
    ("Can every bird fly?", "Are all birds able to fly?"),
    ("What is 7 * 8?", "What is 7 × 8?"),
    # stop 24: chat spellings read as what they stand for
    ("whats the diff between a tuple and a list?", "What is the difference between a tuple and a list?"),
    ("How many calories does walking 10,000 steps burn?", "calories burned walking 10k steps"),
    ("How many miles is a 10K run?", "A 10 km race is how many miles?"),
    ("change wifi password", "How do I change my Wi-Fi password?"),
    ("can u put a wool sweater in the dryer", "Can you put a wool sweater in the dryer?"),
    ("whos the writer of pride and prejudice", "Who is the writer of Pride and Prejudice?"),
    ("What is 9:45 pm in 24-hour time?", "9.45pm in 24 hour clock"),
    ("why humans cant see uv light", "Why can't we see ultraviolet light?"),
    ("swiss currency", "What currency is used in Switzerland?"),  # a people's adjective that names no language
    ("rust String to str slice", "Rust: how to convert a String to &str"),
    ("how to list files in a directory in bash", "list files in a directory bash"),
    ("aspirin for 8yo with fever ok?", "can I give aspirin to my 8 year old for a fever"),
    ("UK personal allowance 2024-25", "UK personal allowance 2024/25"),  # a tax year, not an expression
    ("ISA allowance 2024/2025", "ISA allowance for 2024-25"),
    ("What should I eat after a run?", "what to eat after running"),
    ("Should I stretch before or after running?", "stretch after or before a run?"),  # alternatives, no order
    # stop 25: times of day, days, speeds, formulas and judgements read as one thing however written
    ("cron schedule 9 am weekdays", "cron schedule weekdays at 9:00"),
    ("cron every weekday at 9am", "cron every weekday at 9 a.m."),
    ("What is 7 PM in military time?", "How do you write 7 p.m. in 24-hour format?"),
    ("Tell me the number of seconds in 24 hours.", "How many seconds are in a day?"),
    ("What is 9pm in 24-hour time?", "21:00 in military time"),
    ("Two and a half cups of flour in grams", "convert 2 1/2 cups of flour to grams"),
    ("integral of x^-1", "What is the integral of 1/x?"),
    ("Cleaning a cast iron skillet - what's the right method?", "how to clean cast iron pan"),  # leans on the first part  # a power's minus is the expression's, not a sign
    ("What's the difference between a 15-year and a 30-year mortgage?", "15 vs 30 year mortgage"),
    ("speed of sound in m/s", "speed of sound in meters per second"),
    ("Is overtime paid at 1.5 times the regular rate?", "Is overtime paid at time and a half the regular rate?"),
    ("two and a half cups of flour in grams", "2.5 cups of flour in grams"),
    ("How many moles of H2O is 36 g?", "36 grams of water is how many moles"),
    ("What FICO score is considered good?", "What is a good FICO score?"),
    ("how old does my baby need to be before honey is ok", "when is it safe to give honey to an infant?"),
    # the asker's context: who asks and for what ("my son", "homework", "a chemistry test") changes nothing
    ("My daughter has a chemistry test tomorrow and she's stuck. How many protons does a carbon atom have?",
     "How many protons are in a carbon atom?"),
    ("My son is revising for his GCSE history. What year was the Battle of Hastings?",
     "what year was the battle of hastings"),
    # stop 26: a unit typed against its number; whole days in hours; operators in words; NYC; a citizen
    # is who the people's adjective names; a limit is a maximum; "standard" is "usual"
    ("train goes 240km in 3 hrs average speed?", "A train travels 240 km in 3 hours. What is its average speed?"),
    ("moles in 36g of water", "36 grams of water is how many moles"),
    ("2.4ghz vs 5ghz wi-fi difference", "what is the difference between 2.4 ghz and 5 ghz wifi"),
    ("is it dangerous if a cat doesn't eat for 48 hours", "cat hasn't eaten in 2 days, is that dangerous"),
    ("3/4 plus 2/3", "what does 3/4 + 2/3 equal"),
    ("flight time London to NYC", "How long does it take to fly from London to New York?"),
    ("If it's 9am in New York, what time is it in London?",
     "What time is it in London when it's 9 in the morning in NYC?"),
    ("Can a US citizen live in Canada?", "Can Americans live in Canada?"),
    ("US passport holder visiting Japan - do I need a visa?", "Do I need a visa to travel to Japan as a US citizen?"),
    ("gmail attachment size limit", "What is the maximum attachment size in Gmail?"),
    ("How many hours does it take to learn Spanish according to the FSI?", "FSI hours to learn Spanish"),
    ("As a percentage, how much do Americans usually tip servers at restaurants?",
     "Can you tell me the standard tipping percentage for a waiter in an American restaurant?"),
    ("Who is credited with inventing the telephone?", "Who invented the telephone?"),
    ("Which person is usually credited as the inventor of the telephone?", "Who is credited with inventing the telephone?"),
    ("How do you wish someone happy birthday in Korean?", "happy birthday in korean"),
    ("How do I undo my last Git commit without losing my changes?", "git undo last commit but keep the changes"),
    ("How much of my UK pension can I take tax free?", "How much of my UK pension can I take tax-free?"),
    ("How do I convert a PDF to Word without paying?", "How do I convert a PDF to Word for free?"),
    ("SUGAR-FREE cookie recipe", "sugar free cookie recipe"),
    ("can i replace a 2 prong outlet with a 3 prong outlet", "swap 2-prong outlet for 3-prong, allowed?"),
    ("What happens if you drink too much water?", "What happens when you drink too much water?"),
    ("What happens at a first therapy session?", "What is my first therapy session going to be like?"),
    ("350f to c", "What is 350 degrees Fahrenheit in Celsius?"),  # a glued F after a temperature
    ("convert 9 AM Eastern Standard Time to London time", "9am EST to London time"),  # a zone's abbreviation
    ('Translate "I\'m allergic to peanuts" into Thai', 'What\'s "I am allergic to peanuts" in the Thai language?'),
    ("Are all mushrooms poisonous?", "all mushrooms toxic?"),
    ("What is the 401k contribution limit for 2024?", "401k max contribution 2024"),
    ("How do I scale a Kubernetes deployment to 5 replicas?", "kubectl scale deployment 5 replicas"),
    ("How many calories a day for weight loss?", "How many calories a day to lose weight?"),
    ("checked bag weight limit united economy", "United economy checked luggage max weight"),
    ("Can dogs eat grapes?", "Are grapes safe for dogs?"),  # who eats what, said two ways
    ("Can dogs eat cat food?", "Is cat food safe for dogs?"),
    ("How does a plant-eating animal differ from a meat-eating one?",
     "What separates animals that eat plants from animals that eat meat?"),
    ("How much water should an adult drink per day?", "daily water intake adult"),  # an intake is how much
    ("How much sodium should I have per day?", "What is the recommended daily intake of sodium?"),
    ("croissant origin", "Which country did the croissant actually come from?"),
    ("Is coffee bad for you?", "coffee unhealthy?"),
    ("How do I stop procrastinating?", "How can I quit putting things off?"),
    # stop 27
    ("How many bones are in the adult human body?", "How many bones does a grown human have?"),
    ("How many bones does a grown person's skeleton have?", "How many bones does a grown person have?"),
    ("Which city serves as Portugal's capital?", "portugal capital?"),
    ("Am I required to file taxes as a student?", "Do I have to file taxes as a student?"),
    ("How fast does light travel in vacuum?", "speed of light vacuum"),
    ("circle area formula", "How do you calculate the area of a circle?"),
    ("What's the microwave cooking time for one potato?", "How long do I microwave a potato for?"),
    ("What is the closest star to Earth besides the Sun?", "nearest star to us other than the sun"),
    ("polite way to say no to a wedding invite", "How do I politely decline a wedding invitation?"),
    ("fafsa due date", "When is the FAFSA deadline?"),
    ("Why does my circuit breaker keep tripping?", "what makes a circuit breaker trip over and over"),
    ("Can you walk me through jump-starting a car?", "How do I jump-start a car?"),
    ("calories in a medium-sized banana", "How many calories are in a medium banana?"),
    ("How many holes do you play in a regular round of golf?", "How many holes are in a standard round of golf?"),
    ("i just got a snake plant, how often do i need to water it?", "How often should I water a snake plant?"),
    ("does mars have any moons? how many", "How many moons does Mars have?"),
    ("citrus peel compost yes or no", "Can I compost citrus peels?"),
    ("derivative of x^2 * sin(x)", "what is the derivative of x^2 sin x"),
    ("How do I change a flat tire?", "What are the steps to replace a flat tyre?"),
    ("Does vinegar kill mold?", "Can vinegar get rid of mold?"),
    ("water freezing point f", "What is the freezing point of water in Fahrenheit?"),
    ("derivative of x squared", "What is the derivative of x^2?"),
    ("gmail turn on 2fa", "How do I enable two-factor authentication in Gmail?"),
    ("If I sell stock I've owned for over 12 months, how is the gain taxed?",
     "If I sell stock I've owned for more than a year, how is the gain taxed?"),
    ("freeze first row in google sheets", "google sheets freeze top row"),
    ("Excel formula to count non-empty cells in column A", "Excel formula to count cells in column A that are not blank"),
    ("fluffy eggless pancakes", "fluffy pancakes with no eggs"),
    ("What can I do to avoid getting hiccups?", "How can I prevent hiccups?"),
    ("What is the legal drinking age in Germany?", "germany drinking age"),
    ("Give me a word that means the opposite of generous.", "What is the opposite of \"generous\"?"),
    ("export Gmail contacts as CSV", "How do I export my Gmail contacts to a CSV file?"),
    ("How much protein should an adult eat per day?", "How much protein does an adult need per day?"),
    ("What's \"I'm allergic to peanuts\" in French?", "Can you translate \"I'm allergic to peanuts\" into French?"),
    ("biggest planet in our solar system",
     "My friend and I are arguing over this for a quiz: what's the largest planet in the solar system?"),
    ("1 cup flour in grams", "What does a cup of all-purpose flour weigh in grams?"),
    ("How do I undo the last commit but keep my changes?", "Undo the last git commit but keep my changes, how?"),
    ("inner join vs left join", "How does a LEFT JOIN differ from an INNER JOIN in SQL?"),
    ("zoom mute shortcut", "keyboard shortcut to mute yourself on zoom"),
    ("tallest mountain africa", "highest peak on the african continent"),
    ("How do I cancel my Amazon Prime membership?", "cancel amazon prime"),
    ("How do I install numpy with pip?", "Installing the numpy package via pip?"),
    ("What year did the Titanic go down?", "The Titanic went down in what year?"),
    ("berlin wall fall year", "Which year saw the fall of the Berlin Wall?"),
    ("Write an email to my landlord about a broken heater.", "Draft an email to my landlord about the heater being broken."),
    ("Compose a limerick about a coffee-loving cat.", "Write a limerick about a cat who loves coffee."),
    ("Who composed the Four Seasons?", "Who wrote The Four Seasons?"),
    ("Where do I find my public IP address on a Mac?", "How can I see my Mac's public IP?"),
    ("How can I change the password on my Wi-Fi network?", "change wifi password"),
    ("pancreas function", "What does the pancreas do?"),
    ("golden retriever life expectancy", "How long do golden retrievers live?"),
    ("std dev vs variance", "What's the difference between standard deviation and variance?"),
    ("eli5 index fund", "What is an index fund?"),
    ("hey quick q, what is the capital of France", "What is the capital of France?"),
    ("iphone screenshot", "How do I take a screenshot on an iPhone?"),
    ("word insert page numbers", "How do I add page numbers in Microsoft Word?"),
    ("s3 max object size", "What is the maximum object size in Amazon S3?"),
    ("Is the keto diet safe for type 2 diabetics?", "is keto safe for type 2 diabetics"),
    ("Which port does SSH use out of the box?", "What port does SSH use by default?"),
    ("How do I freeze the header row in Excel?", "How do I freeze the top row in Excel?"),
    ("Is a visa needed for 14 days in Japan?", "Do I need a visa for two weeks in Japan?"),
    ("What will $10,000 at 5% compounded yearly be after a decade?",
     "What will $10,000 at 5% compounded yearly be after 10 years?"),
    ("I keep mixing up LEFT JOIN with INNER JOIN. What separates the two?",
     "What's the difference between INNER JOIN and LEFT JOIN?"),
    ("When do I pay estimated taxes each quarter?", "When do I pay quarterly estimated taxes?"),
    ("My son has a test tomorrow on the first Harry Potter book. How many books are in the series?",
     "How many books are in the Harry Potter series?"),
    ("How do I prevent shin splints in the first place?", "How do I prevent shin splints?"),
    ("What is recursion?", "Explain recursion in programming."),  # a field named on one side
    ("What does the word galaxy mean in astronomy?", "galaxy definition"),
    ("natural selection meaning biology", "Define natural selection."),
    ("primary key meaning", "Explain what a primary key is in SQL."),
    ("speed vs velocity difference physics", "How does velocity differ from speed?"),
    ("Which skyscraper is the tallest in the world?", "Which building is the tallest in the world?"),
    ("How do I turn on dark mode on my iPhone?", "How can I enable dark mode on my iPhone?"),
    ("What is the difference between a stock and a bond?", "How do shares differ from bonds?"),
    ("linux find biggest files in folder", "How do I find the largest files in a directory on Linux?"),
    ("85 bucks, 20% tip, how much", "what's a 20 percent tip on 85 dollars"),
    ("Who sang Respect?", "Who performed Respect?"),
    ("js deep copy object", "How do I deep clone an object in JavaScript?"),
    ("docker remove all stopped containers", "docker delete exited containers"),
    ("max bowling score", "bowling perfect score"),
    ("Explain the water cycle.", "Describe the hydrologic cycle."),
    ("How does a hash map work internally?", "hashmap internals explained"),  # the verb of "how … works"
    ("Explain how the internet works to a 5-year-old.", "explain the internet to a 5 year old"),
    ("marathon distance", "How long is a marathon?"),  # a measure named, against the question that asks it
    ("half marathon distance in km", "how many km is a half marathon"),
    ("How many minutes should I microwave a potato?", "How long do I microwave a potato for?"),
    ("What's 60 mph in km/h?", "how fast is 60 mph in km/h"),
    ("Name the planet that orbits nearest the sun.", "Which planet is closest to the sun?"),
    ("How many moons orbit the Earth?", "How many moons does Earth have?"),
    ("How much energy, in calories, does a banana have?", "banana calories"),
    ("Which language is spoken in Brazil?", "brazil language"),
    ("why does the sky appear blue", "Why is the sky blue?"),
    ("What does Newton's second law of motion state?", "Explain Newton's second law"),
    ("daily protein requirement", "How much protein do I need per day?"),
    ("As an American, is a visa required for a trip to Japan?", "Do I need a visa to travel to Japan as a US citizen?"),
    ("Do students have to file a tax return?", "Do I have to file taxes as a student?"),
    ("c major triad notes", "What notes are in a C major chord?"),
    ("How expensive is a Netflix subscription?", "How much does a Netflix subscription cost?"),
    ("At what age do most children get potty trained?", "When are kids usually potty trained?"),
    ("How much chocolate is toxic for a 10 kg dog?", "how much chocolate does it take to poison a 10 kg dog"),
    ("ugh my sink is clogged, how do I fix it", "how do I fix a clogged sink"),  # chat interjections
    ("Is chocolate toxic to dogs?", "Is chocolate safe for dogs?"),  # one yes or no, whichever way it leans
    ("How do I calculate compound interest?", "What's the formula for compound interest?"),
    ("Which city is Germany's capital?", "What's the German capital?"),
    # chat spellings: "wat"/"wut", "r", "n", "y", "b4", "btwn", "calc", "w/"
    ("wats the total of the interior angles in a hexagon", "What is the sum of the interior angles of a hexagon?"),
    ("wut does opportunity cost mean", "What is opportunity cost?"),
    ("whats the diff btwn malloc n calloc in C", "What's the difference between malloc and calloc in C?"),
    ("how to calc molarity of a solution", "How do I calculate the molarity of a solution?"),
    ("which fruits r poisonous for parakeets", "What fruits are toxic to parakeets?"),
    ("wat grit sandpaper do i use b4 staining oak", "What grit sandpaper should I use before staining oak?"),
    ("default postgres port", "What port does PostgreSQL use by default?"),
    ("will looking up my credit score hurt it", "does checking my own credit score lower it"),
    ("how can u tell if a cockatiel is a boy or girl", "How do I tell if my cockatiel is male or female?"),
    ("How many teeth do grown-ups have?", "How many teeth does an adult human have?"),
    ("Is it OK to combine Advil and acetaminophen?", "Tell me if mixing ibuprofen and paracetamol is safe."),
    ("Explain why the Roman Empire collapsed.", "Why did the Roman Empire fall?"),
    ("How much water should I bring on a hike?", "Tell me how much water to carry when hiking."),
    ("How do I ask for a raise?", "tips raise request"),
    ("first us president", "Who was the first president of the United States?"),
    ("Is Bitcoin taxable?", "Do I have to pay taxes on Bitcoin?"),  # a tax paid on it is a tax on it
    ("What are the signs of dehydration?", "How can I tell if I'm dehydrated?"),  # signs: how to tell
    ("minimum age to rent a car in the US", "How old do I need to be to rent a car in the US?"),
    ("Is daily ibuprofen use safe?", "Is it okay to take ibuprofen every day?"),  # a drug is taken
    ("leftover roast chicken fridge days safe", "How many days is leftover roast chicken safe to eat from the fridge?"),
    ("How much should a teenager sleep each night?", "How many hours of sleep does a teenager need?"),
    ("What are the rules for using a semicolon in English?", "When should I use a semicolon?"),
    ("marathon length", "How long is a marathon?"),
    ("how long should a cover letter be", "ideal length of a cover letter?"),  # a thing's own length
    ("How long is the flight from New York to London?", "How many hours does it take to fly from New York to London?"),
    ("how much is a costco membership", "costco membership cost"),
    ("What do you get when you take the derivative of sine of x?", "What is the derivative of sin(x)?"),
    ("What's the length of a marathon race?", "How far do you run in a marathon?"),
    ("python merge dicts", "How do I merge two dictionaries in Python?"),  # the two a plural says
    ("c compare strings", "How do I compare two strings in C?"),
    ("non greedy regex", "How do I make a regex match non-greedy?"),  # what a regex does
    ("How can you tell a crocodile from an alligator?", "What's the difference between a crocodile and an alligator?"),
    ("How many times a day should a grown cat be fed?", "How often should I feed an adult cat?"),
    # a negation said in one word
    ("What can I do to lower my blood pressure without drugs?", "How do I lower my blood pressure naturally?"),
    ("Can you legally drive without shoes in the United Kingdom?", "Is it legal to drive barefoot in the UK?"),
    ("My toilet won't stop running after flushing - how do I fix it?",
     "How do I fix a toilet that keeps running after I flush?"),
    ("How can I make pancakes without a mix?", "How do I make pancakes from scratch?"),
    ("What calorie intake do I need to lose weight?", "How many calories should I eat to lose weight?"),  # an amount
    ("How early do I need to get to the airport for an international flight?",
     "How early should I get to the airport for an international flight?"),
    ("Can you show me how to delete a branch in git?", "How do I delete a git branch?"),  # "show me how" asks nothing
    ("I drink too much coffee. How much caffeine is in a cup?", "How much caffeine is in a cup of coffee?"),
    # stop 30: keep … from -ing is stop; the verb of "how long does X take" against a duration asked otherwise;
    # turning a colour; a temperature a thing is set to; giving an animal a food; how far in advance; working out
    ("how do i keep my babys ears from hurting when we fly", "How can I stop my baby's ears from hurting on a plane?"),
    ("international wire transfer time", "How long does an international wire transfer take?"),
    ("how long does mod podge take to dry", "mod podge drying time"),
    ("pothos yellow leaves cause", "Why are the leaves on my pothos turning yellow?"),
    ("ideal fridge temperature", "What temperature should my fridge be set to?"),
    ("What temp should I set my refrigerator to?", "what temperature should my fridge be"),
    ("is it ok to give my dog grapes", "Can dogs eat grapes?"),
    ("how early to book moving company", "How far in advance should I book movers?"),
    ("how far ahead do i need to book a moving company", "How far in advance should I book movers?"),
    ("What's the way to work out how much I'll pay each month on a mortgage?",
     "How do I calculate my monthly mortgage payment?"),
    # chat spellings and words: "r u", "till", "the diff", "pw", "refi", "sometimes"; put = contribute
    ("r u allowed to drink water on yom kippur", "Can you drink water on Yom Kippur?"),
    ("how long till i get my green card", "how long until i get my green card"),
    ("type or interface in ts whats the diff", "What is the difference between type and interface in TypeScript?"),
    ("forgot my bitwarden master pw", "I forgot my Bitwarden master password"),
    ("if i refi my federal loans what do i lose", "What do I lose if I refinance my federal loans?"),
    ("why can i see lightning but hear no thunder", "Why can you sometimes see lightning but not hear thunder?"),
    ("how much can i put in my 401k in 2024", "How much can I contribute to my 401(k) in 2024?"),
    ("Where do I find my public IP address on a Mac?", "How can I see my Mac's public IP?"),  # mine through my Mac
    # keep -ing goes on; X-rich is high in X; travelling to the place the other names; a lifespan is how long a
    # thing lasts; swaps result/return, last/stay, claw/scratch, record/row
    ("toilet keeps running after flush", "toilet runs after flush"),
    ("Why does my baby keep crying at night?", "Why does my baby cry at night?"),
    ("iron rich foods", "What foods are high in iron?"),
    ("do i need a visa for japan", "Do I need a visa to travel to Japan?"),
    ("car battery lifespan years", "How long does a car battery usually last?"),
    ("In JS, what's the result of `typeof null`?", "What does `typeof null` return in JavaScript?"),
    ("refrigerated cooked rice, how long does it last", "How long can cooked rice stay in the fridge?"),
    ("Tell me about Cleopatra.", "cleopatra who was she"),  # who someone is, not what someone does
    # stop 31: what the asker read, heard, watched or plans in a sentence of context; a spreadsheet's formula; a
    # conversion's formula; meat cooked to a temperature or rested after cooking; a visa is for travelling; a drug's
    # dose is how much is taken; "first" before the verb of a thing's origin; a duration named in a keyword query
    ("My daughter is reading Pride and Prejudice for English class and asked me who wrote it. Who was it?",
     "Who wrote Pride and Prejudice?"),
    ("I'm a US citizen planning a two-week vacation in France. Do I need a visa?",
     "As an American going to France on vacation for two weeks, do I have to get a visa?"),
    ("Excel formula to count non-empty cells in column A",
     "In Excel, how do I count the cells in column A that are not blank?"),
    ("celsius to fahrenheit formula", "How do I convert Celsius to Fahrenheit?"),
    ("chicken done temperature", "What temperature should chicken be cooked to?"),
    ("steak resting time", "How long should I rest a steak after cooking?"),
    ("Vietnam tourist visa US citizens", "Do US citizens need a visa to visit Vietnam for tourism?"),
    ("adult daily vitamin d dose", "How much vitamin D should an adult take daily?"),
    ("daily magnesium safe", "Is it safe to take magnesium every day?"),
    ("What's the most ibuprofen a grown-up should take in one day?",
     "What is the maximum dose of ibuprofen per day for adults?"),
    ("Which scientist first discovered penicillin?", "Who discovered penicillin?"),
    ("how long to boil an egg", "boil egg time"),
    ("thank you in japanese", "Tell me how to say thanks in Japanese."),
    ('I\'m writing a cover letter and I\'m not sure about this phrase. Is it "I look forward to hearing from you" or '
     '"I look forward to hear from you"?', 'Cover letter question: which is correct, "I look forward to hearing from '
     'you" or "I look forward to hear from you"?'),
]

NUMBERS = [  # (text, numbers, ordinals) as the guard reads them; a lone 1 ("a banana") carries nothing
    ("one hundred and forty-four", (144.0,), ()),
    ("multiply seven and eight", (7.0, 8.0), ()),
    ("the 4-7-8 breathing method", (4.0, 7.0, 8.0), ()),
    ("the four-seven-eight breathing method", (4.0, 7.0, 8.0), ()),
    ("two dozen eggs", (24.0,), ()),
    ("nineteen eighty-four", (1984.0,), ()),
    ("two thirds of a cup", (2.0, 3.0), ()),
    ("2/3 cup", (2.0, 3.0), ()),
    ("a quarter cup", (4.0,), ()),
    ("the third planet", (), (3,)),
    ("a third of 90", (3.0, 90.0), ()),
    ("season 2 finale", (), (2,)),
    ("How do I round to 2 decimal places?", (2.0,), ()),
    ("one and a half times the rate", (1.5,), ()),
    ("an hour and a half", (1.5,), ()),
    ("three and a half years", (3.5,), ()),
    ("time-and-a-half for overtime", (1.5,), ()),
    ("speed of light in meters per second", (), ()),  # a unit, not the second of something
    ("the second largest city", (), (2,)),
    ("first aid for burns", (), ()),  # care, not an ordinal
    ("meet at 9:00 or at 9am", (), ()),  # times of day are `Facts.clocks`, not numbers
    ("convert 2 1/2 cups of flour", (2.5,), ()),  # a mixed number
    ("a 240km trip", (240.0,), ()), ("3.5mm jack", (3.5,), ()), ("8GB of RAM", (8.0,), ()),  # a unit typed on
    ("iPhone 5s", (), ()), ("the 90s", (), ()), ("a 5G phone", (), ()), ("1080p video", (), ()),  # no unit
    ("a 72-hour fast", (3.0,), ()), ("within 48 hours", (2.0,), ()),  # whole days
]

INTENTS = [  # what the wording of a question asks for (`intents.intent_of`)
    ("How do I calculate EBITDA?", "howto"),
    ("How is mead made?", "manner"),
    ("What's the best way to learn touch typing?", "manner"),
    ("What is EBITDA?", "definition"),
    ("What does the phrase 'break the ice' mean?", "definition"),
    ("What is a good cap rate?", "norm"),
    ("What is kombucha made of?", "composition"),
    ("How long does it take to renew a passport?", "quantity"),
    ("Do I need gap insurance?", "yesno"),
    ("97 prime or not?", "yesno"),
    ("Tell me whether coffee causes dehydration.", "yesno"),
    ("Is a CV the same thing as a resume?", "comparison"),
    ("Who created the Eisenhower matrix?", "person"),
    ("What is the reason cats purr?", "reason"),
    ("What is the capital of Australia?", "what-is"),  # an attribute: only "made of" contradicts it
    ("define osmosis", "definition"),
    ("ebitda meaning", "definition"),
    ("What causes hiccups?", "reason"),
    ("How did the Titanic sink?", "how-did"),  # what happened: not a how-to, nor when or where
    ("Which planets have rings?", "which"),  # names them; "How many planets…" counts them
    ("What were the names of Henry VIII's wives?", "which"),
    ("What year did the Berlin Wall fall?", None),  # a "what X" that asks for a date
    ("How do I treat a migraine?", "howto"),  # what to do: a manner that is not a reason either
    ("What should I do if someone is choking?", "howto"),
    ("How do earthquakes happen?", "manner"),  # a process, which "Why…?" may share
    ("What is Moby-Dick about?", "topic"),
    ("What is the main idea of Walden?", "topic"),
    ("Can I take ibuprofen and acetaminophen at the same time?", "yesno"),  # "at the same time" compares nothing
    ("Is a crocodile the same as an alligator?", "comparison"),
    ("What is the moral of The Tortoise and the Hare?", "topic"),
    ("What is the point of a VPN?", "what-is"),  # its use: "point" says what a work says only after "main"
    ("What did Julius Caesar look like?", "appearance"),
    ("What happened to the Romanov family?", "event"),
    ("What is the tallest tree in the world?", "which"),
    ("What is the minimum wage in California?", "what-is"),  # an amount, not a superlative
    ("What does the pancreas do?", "function"),
    ("Explain exception handling in Python.", "overview"),  # a definition and a how-to alike
    ("Tell me about Julius Caesar.", "overview"),
    ("inflation explained", "overview"),
    ("Explain what mead is.", "definition"),  # an embedded question, read as "What is mead?"
    ("Who was Napoleon?", "who-is"),  # who in general, as "Tell me about Napoleon"
    ("Can you explain who Napoleon was?", "who-is"),
    ("Who is the CEO of Microsoft?", "person"),  # one person, picked out by a role
    ("Who is Shakira married to?", "person"),
    # the wording does not say: no constraint
    ("Should I stretch before or after running?", None),
    ("Tell me what car insurance costs.", None),  # an embedded question
    ("What is Parkinson's Law?", "definition"),  # a name that holds a possessive
    ("What is Australia's capital?", "what-is"),
    ("python reverse list", None),
]


@pytest.mark.parametrize(("query", "cached", "reason"), REFUSED)
def test_near_misses_are_refused_by_the_right_check(query, cached, reason):
    verdict = verify(query, cached)
    assert not verdict.ok and verdict.reason == reason, verdict
    assert not verify(cached, query).ok  # and the other way round


@pytest.mark.parametrize(("query", "cached"), SERVED)
def test_paraphrases_pass_the_rules(query, cached):
    # the rules alone; the learned stage after them may still refuse (tests/cache/test_verifier.py)
    assert verify_rules(query, cached).ok, verify_rules(query, cached)


@pytest.mark.parametrize(("text", "intent"), INTENTS)
def test_the_intent_is_read_from_the_wording(text, intent):
    assert analyse(text).intent == intent


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_guard_refuses_the_labelled_near_misses(split):
    """Quality floor on the hand-labelled set (not a timing): the guard refuses ≥ 99% of the near-misses
    against their own question, and serves a meaningful share of the paraphrases."""
    groups = load_groups(split)
    near = [(t, g.query) for g in groups for _, t in g.near_misses]
    para = [(p, g.query) for g in groups for p in g.paraphrases]
    refused = sum(not verify(q, c).ok for q, c in near) / len(near)
    served = sum(verify(q, c).ok for q, c in para) / len(para)
    assert refused >= 0.99, refused
    assert served >= 0.35, served


def test_the_rules_refuse_the_adversarial_near_misses():
    """cache/data/groups_probe_a.txt was written against the guard: before cache/shapes.py and its
    companions the rules refused 74% of its near-misses against their own question; now ≥ 93%."""
    groups = load_groups("probe_a")
    near = [(t, g.query) for g in groups for _, t in g.near_misses]
    para = [(p, g.query) for g in groups for p in g.paraphrases]
    assert sum(not verify_rules(q, c).ok for q, c in near) / len(near) >= 0.93
    assert sum(verify_rules(q, c).ok for q, c in para) / len(para) >= 0.5


def test_the_rules_refuse_probe_c():
    """cache/data/groups_probe_c.txt was written against the guard after stop 21's first checks: they
    refused 67% of its near-misses against their own question; the checks designed on it refuse ≥ 84%
    and pass as many of its paraphrases as before (48%)."""
    groups = load_groups("probe_c")
    near = [(t, g.query) for g in groups for _, t in g.near_misses]
    para = [(p, g.query) for g in groups for p in g.paraphrases]
    assert sum(not verify_rules(q, c).ok for q, c in near) / len(near) >= 0.84
    assert sum(verify_rules(q, c).ok for q, c in para) / len(para) >= 0.48


def test_chat_spellings_are_read_only_in_english():
    """"doesnt" negates and "im" is "I'm" in English chat; French "dont" and German "im" are words."""
    assert analyse("why doesnt my phone charge").negated
    assert not analyse("Quel est le livre dont tu parles ?").negated
    assert analyse("Was kostet ein Bier im Restaurant?").language == "de"


def test_context_that_changes_the_answer_is_never_served_across():
    """cache/data/pairs_context.txt: a question that opens with context about the asker ("I'm pregnant. Is
    it safe to eat sushi?") against a cached one without it. The context's words stay terms: forgiving
    them when the question sentence repeats the cached question was measured (stop 24) and served 45 of
    the 48 pairs whose context changes the answer."""
    pairs = load_pairs()
    diff = [(q, c) for label, q, c in pairs if label == "DIFF"]
    assert len(diff) >= 40
    assert not [(q, c) for q, c in diff if verify_rules(q, c).ok or verify_rules(c, q).ok]


@pytest.mark.parametrize(("text", "numbers", "ordinals"), NUMBERS)
def test_numbers_are_read_as_written(text, numbers, ordinals):
    facts = analyse(text)
    assert (facts.numbers, facts.ordinals) == (numbers, ordinals)


@pytest.mark.parametrize(("text", "clocks"), [
    ("at 9am", ("clock0900",)), ("at 9 a.m.", ("clock0900",)), ("at 9:00 AM", ("clock0900",)), ("at 09:00", ("clock0900",)),
    ("at 9.45pm", ("clock2145",)), ("at 21:45", ("clock2145",)), ("at 12am", ("clock0000",)), ("at 12:30 pm", ("clock1230",)),
    ("at 9:45", ("clock0945",)),  # no am or pm: read as written
    ("9 in the morning", ("clock0900",)), ("at 9:30 in the evening", ("clock2130",)), ("10 at night", ("clock2200",)),
    ("a 16:9 screen", ()), ("10:30:15 elapsed", ()),  # a ratio, a duration: no time of day
    ("at noon", ("clock1200",)), ("at 12 noon", ("clock1200",)), ("at midnight", ("clock0000",)),
])
def test_times_of_day_read_on_the_24_hour_clock(text, clocks):
    assert analyse(text).clocks == clocks


_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _two_digits(n: int) -> str:
    return _ONES[n] if n < 20 else _TENS[n // 10] + (f"-{_ONES[n % 10]}" if n % 10 else "")


def _spelled(n: int, with_and: bool) -> str:
    """English for 0 < n < 10,000: "one thousand two hundred (and) thirty-four"."""
    parts = []
    if n >= 1000:
        parts.append(f"{_two_digits(n // 1000)} thousand")
        n %= 1000
    if n >= 100:
        parts.append(f"{_ONES[n // 100]} hundred")
        n %= 100
    if n:
        parts.append(("and " if with_and and parts else "") + _two_digits(n))
    return " ".join(parts)


def test_every_number_spelled_in_words_reads_as_its_digits():
    # the number-word reader against every spelling of 2…9,999, next to another number it must not swallow,
    # and years said in pairs ("nineteen eighty-four")
    wrong = []
    for n in range(2, 10_000):
        for with_and in (False, True):
            text = f"What is {_spelled(n, with_and)} divided by seven?"
            if analyse(text).numbers != tuple(sorted((float(n), 7.0))):
                wrong.append((text, analyse(text).numbers))
        if 1100 <= n < 2100 and n % 100 >= 10:
            text = f"What happened in {_two_digits(n // 100)} {_two_digits(n % 100)}?"
            if analyse(text).numbers != (float(n),):
                wrong.append((text, analyse(text).numbers))
    assert not wrong, wrong[:10]


@pytest.mark.parametrize(("text", "term", "present"), [
    ("How many planes are over the US?", "united_states", True),
    ("What is the U.S. population?", "united_states", True),
    ("us passport renewal price", "united_states", True),
    ("Can you help us?", "united_states", False),
    ("What is the weather in Lisbon in May?", "may_month", True),
    ("May I ask a question?", "may_month", False),
    ("What happens if I die without a will?", "testament", True),
    ("Will it rain tomorrow?", "testament", False),
    ("How do I get a job in IT?", "information_technology", True),
    ("Which foods are high in vitamin K?", "k", True),
])
def test_content_words_spelled_like_function_words(text, term, present):
    # "us", "may", "will", "it" and single letters are function words or noise almost always; where they
    # name a country, a month, a document, a field or a vitamin they must be compared like any term
    assert (term in analyse(text).terms) == present, analyse(text).terms


def test_stemming_runs_on_the_c_snowball():
    # PyStemmer (a dependency) gives the same Porter2 stems as the pure-Python snowballstemmer and
    # makes the guard's analysis of a new text ~6x faster; without it every lookup pays ~1 ms more.
    from cache import wording

    assert type(wording.STEMMER).__module__ == "Stemmer"
    assert [wording.light_stem(w) for w in ("running", "boiling", "generously", "kilometres")] == \
        ["run", "boil", "generous", "kilometr"]


def test_a_texts_tokens_are_read_once_and_handed_out_as_a_new_list():
    # tokenize's reading is cached per text (the guard's checks each ask for it); callers edit the list
    # they get, which must never change what the next caller reads
    from cache.wording import tokenize, tokens_of

    text = "Why can't I log in to my W-2 portal?"
    first = tokenize(text)
    assert first == ["why", "can", "not", "i", "log", "in", "to", "my", "w2", "portal"]
    first[0] = "how"
    first.append("today")
    assert tokenize(text) == ["why", "can", "not", "i", "log", "in", "to", "my", "w2", "portal"]
    assert tokens_of(text) is tokens_of(text)


# Words the guard's patterns key on, so generated texts reach its branches ("what" alone once raised).
_KEY_WORDS = ["what", "which", "who", "whom", "how", "did", "do", "does", "is", "causes", "happened", "define",
              "meaning", "about", "look", "like", "write", "poem", "summarize", "with", "answers", "say",
              "hello", "to", "over", "than", "in", "The", "Little", "City", "inventor", "date", "4/3", "2^10",
              "tallest", "names", "of", "should", "I", "if", "not", "US", "May", "km", "miles", "?", "\"x\"",
              "one", "a", "third", "thirds", "two", "quarter", "hundred", "and", "nineteen", "season", "1", "or"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_KEY_WORDS), st.text(max_size=8)), max_size=8),
       st.lists(st.sampled_from(_KEY_WORDS), max_size=8))
def test_the_guard_never_raises_and_is_symmetric_in_what_it_refuses(query_words, cached_words):
    # Any request text reaches the guard; it must answer, never raise, and a pair it refuses one way
    # round it refuses the other way round too (the reason may differ: checks run in order).
    query, cached = " ".join(query_words), " ".join(cached_words)
    forward, backward = verify_rules(query, cached), verify_rules(cached, query)
    assert forward.ok == backward.ok, (forward, backward)
    assert verify(query, cached).ok in (True, False)
